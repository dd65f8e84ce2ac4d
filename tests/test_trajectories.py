"""Trajectories, hand-eye and world placement, clocks: the physics of steps 1-4."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.synth import trajectories as tj
from kinhec.models.cameras import get_camera, get_target, visibility
from kinhec.util.errors import ConvergenceError, InputError
from kinhec.geometry.motion import rotation_axis_scatter
from kinhec.models.robots import ROBOT_NAMES, get_robot

ARMS = [n for n in ROBOT_NAMES if n != "free6d"]
FREE = get_robot("free6d")
HD = get_camera("hd")
CHECKER = get_target("checker_9x6_25mm")
MARKER = get_target("marker_3x3_30mm")


def _dense(traj, n=4001):
    return np.linspace(0.0, traj.duration_s, n)


def _check_joint_physics(robot, traj, speed_fraction):
    t = _dense(traj)
    q = traj.joint_positions(t)
    qd = traj.joint_velocities(t)
    assert np.all(q >= robot.q_min_rad - 1e-12) and np.all(q <= robot.q_max_rad + 1e-12)
    assert np.all(np.abs(qd) <= speed_fraction * robot.qd_max_rad_s * (1 + 1e-9))
    # velocities are the derivative of the positions (central differences with a small step)
    h = 1e-6
    tc = np.clip(t, h, traj.duration_s - h)
    fd = (traj.joint_positions(tc + h) - traj.joint_positions(tc - h)) / (2 * h)
    scale = speed_fraction * robot.qd_max_rad_s.max()
    assert np.abs(fd - traj.joint_velocities(tc)).max() < 1e-5 * scale


# --------------------------------------------------------------------------- #
# minimum jerk
# --------------------------------------------------------------------------- #
def test_min_jerk_profile():
    s = np.linspace(0, 1, 100001)
    y = tj.min_jerk(s)
    assert y[0] == 0 and y[-1] == pytest.approx(1.0)
    assert np.all(np.diff(y) >= 0)
    d = tj.min_jerk_rate(s)
    assert np.allclose(np.gradient(y, s)[1:-1], d[1:-1], atol=1e-8)
    assert d.max() == pytest.approx(1.875) and s[np.argmax(d)] == pytest.approx(0.5)
    assert d[0] == 0 and d[-1] == 0


# --------------------------------------------------------------------------- #
# step 1: hand-eye
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "configuration, z_range, lateral, cone_deg",
    [("eye_in_hand", (0.02, 0.12), 0.08, 40.0), ("eye_to_hand", (0.0, 0.10), 0.05, 30.0)],
)
def test_hand_eye_ranges(configuration, z_range, lateral, cone_deg):
    rng = np.random.default_rng(1)
    X = np.stack([tj.sample_hand_eye(rng, configuration) for _ in range(500)])
    se3.check_transforms(X)
    p = X[:, :3, 3]
    assert p[:, 2].min() >= z_range[0] and p[:, 2].max() <= z_range[1]
    assert np.abs(p[:, :2]).max() <= lateral + 1e-12
    assert np.hypot(p[:, 0], p[:, 1]).max() > 1.2 * lateral  # the whole square is used, its corners too
    ang = np.degrees(np.arccos(np.clip(X[:, 2, 2], -1, 1)))  # optical axis / marker normal vs flange z
    assert ang.max() <= cone_deg + 1e-9 and ang.max() > 0.9 * cone_deg
    # the tilt is uniform in angle (the published draw), not over the cap: a KS test against U(0, cone_deg)
    from scipy import stats

    assert stats.kstest(ang / cone_deg, "uniform").pvalue > 0.01
    assert stats.kstest(p[:, 0] / lateral, stats.uniform(-1, 2).cdf).pvalue > 0.01
    # random roll: the x axes point all around
    xs = X[:, :3, 0]
    assert np.linalg.norm(xs.mean(axis=0)) < 0.1


def test_hand_eye_rejects_unknown_configuration():
    with pytest.raises(InputError, match="configuration: expected 'eye_in_hand' or 'eye_to_hand'"):
        tj.sample_hand_eye(np.random.default_rng(0), "eye_on_base")


# --------------------------------------------------------------------------- #
# joint sinusoid
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ARMS)
def test_joint_sinusoid_limits_and_speed(name):
    robot = get_robot(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # hash() of a str changes from one process to the next
    for speed, harmonics in ((0.25, 2), (0.35, 3)):
        traj = tj.joint_sinusoid(robot, rng, duration_s=20.0, speed_fraction=speed, n_harmonics=harmonics)
        assert traj.amplitude_rad.shape == (robot.dof, harmonics)
        # the analytic bound sum_h A omega is what caps the speed
        assert np.all(traj.speed_bound_rad_s() <= speed * robot.qd_max_rad_s * (1 + 1e-12))
        _check_joint_physics(robot, traj, speed)
        # the motion is substantial: every joint's amplitudes add up to several degrees, and the joints do swing
        # by that much; two sinusoids of nearly the same frequency in opposite phase can cancel over the 20 s (the
        # published law allows it: 2 in 6,000 draws leave one IRB 120 joint within 5 deg), so one joint may fall short
        assert np.all(np.degrees(traj.amplitude_rad.sum(axis=1)) > 5.0)
        q = traj.joint_positions(_dense(traj))
        assert np.sum(np.degrees(q.max(0) - q.min(0)) <= 5.0) <= 1


def test_joint_sinusoid_frequencies_are_drawn_independently():
    """Each sinusoid of a joint has its own frequency, uniform in the range (not harmonics of one base frequency)."""
    robot = get_robot("ur5e")
    f = np.concatenate([tj.joint_sinusoid(robot, np.random.default_rng([1, k]), duration_s=10, n_harmonics=3,
                                          frequency_range_hz=(0.1, 0.6)).omega_rad_s / (2 * np.pi)
                        for k in range(60)])  # fmt: skip
    assert f.shape == (60 * robot.dof, 3)
    assert np.all((f >= 0.1) & (f <= 0.6))
    # uniform on [0.1, 0.6]: mean 0.35, standard deviation 0.5 / sqrt(12) = 0.144 (1,080 draws: +-0.013 at 3 sigma)
    assert abs(f.mean() - 0.35) < 0.013 and abs(f.std() - 0.5 / math.sqrt(12)) < 0.012
    # independent of one another: the second is no multiple of the first (2 f_1 would leave the range half the time)
    assert abs(np.corrcoef(f[:, 0], f[:, 1])[0, 1]) < 0.1
    assert np.mean(np.isclose(f[:, 1], 2 * f[:, 0])) == 0


@pytest.mark.parametrize("name", ["ur5e", "panda", "puma560"])
def test_joint_sinusoid_amplitude_and_centre_are_fractions_of_each_joints_range(name):
    """The swing of an excited joint is 12 % of its range (less only where the speed cap binds), around a centre up
    to 10 % of the range from home, and stays inside the limits (the published generator's law)."""
    robot = get_robot(name)
    span = robot.q_max_rad - robot.q_min_rad
    full = np.minimum(tj.SINUSOID_AMPLITUDE_FRACTION * span, 0.5 * span - tj.LIMIT_MARGIN_RAD)
    offs = []
    for k in range(40):
        traj = tj.joint_sinusoid(robot, np.random.default_rng([2, k]), duration_s=10.0)
        total = traj.amplitude_rad.sum(axis=1)
        capped = np.isclose(traj.speed_bound_rad_s(), 0.25 * robot.qd_max_rad_s)
        assert np.all(total <= full * (1 + 1e-12))
        assert np.allclose(total[~capped], full[~capped])
        # the extreme excursion centre +- sum A stays inside the limits less the margin
        assert np.all(traj.centre_q_rad - total >= robot.q_min_rad + tj.LIMIT_MARGIN_RAD - 1e-12)
        assert np.all(traj.centre_q_rad + total <= robot.q_max_rad - tj.LIMIT_MARGIN_RAD + 1e-12)
        offs.append((traj.centre_q_rad - robot.home_q_rad) / span)
    offs = np.array(offs)
    assert np.all(np.abs(offs) <= tj.SINUSOID_CENTRE_FRACTION + 1e-12)
    # a UR's joints turn +-360 deg: no clipping, the offsets fill +-10 % of the range (a base joint up to +-72 deg)
    if name == "ur5e":
        assert np.abs(offs).max() > 0.09 and np.degrees(np.abs(offs[:, 0] * span[0]).max()) > 60


@pytest.mark.parametrize("name", ["ur5e", "panda", "iiwa14", "irb120", "puma560"])
def test_joint_subsets(name):
    robot = get_robot(name)
    rng = np.random.default_rng(7)
    axes_home = robot.jacobian(robot.home_q_rad)[:3].T
    for subset, count in (("single", 1), ("parallel", 2), ("two_axes", 2), ("wrist", 3), ("all", robot.dof)):
        traj = tj.joint_sinusoid(robot, rng, duration_s=10, subset=subset)
        q = traj.joint_positions(_dense(traj))
        moving = np.flatnonzero(np.ptp(q, axis=0) > 1e-9)
        assert sorted(moving.tolist()) == sorted(traj.excited) and len(moving) == count
        # the joints held still sit at the centre configuration
        still = np.setdiff1d(np.arange(robot.dof), moving)
        assert np.allclose(q[:, still], traj.centre_q_rad[still])
        # ... which is home; the excited joints' centre lies within 10 % of their range from home
        assert np.array_equal(traj.centre_q_rad[still], robot.home_q_rad[still])
        span = robot.q_max_rad - robot.q_min_rad
        assert np.all(np.abs(traj.centre_q_rad - robot.home_q_rad) <= tj.SINUSOID_CENTRE_FRACTION * span + 1e-12)
        if subset == "wrist":
            assert moving.tolist() == list(range(robot.dof - 3, robot.dof))
        if subset in ("parallel", "two_axes"):
            a, b = axes_home[moving[0]], axes_home[moving[1]]
            c = abs(a @ b) / np.linalg.norm(a) / np.linalg.norm(b)
            if subset == "parallel":
                assert c > math.cos(math.radians(1.0))
            else:
                assert c < math.cos(math.radians(45.0))


def test_single_joint_motion_is_degenerate():
    """Exciting one joint rotates the flange about one fixed axis: the axis scatter vanishes."""
    robot = get_robot("ur5e")
    traj = tj.joint_sinusoid(robot, np.random.default_rng(3), duration_s=10, subset="single")
    T = traj.flange_poses(np.linspace(0, 10, 50), robot)
    rel = se3.invert_transform(T[:-1]) @ T[1:]
    assert rotation_axis_scatter(rel[:, :3, :3])[1] < 1e-12


def test_joint_families_reject_free6d_and_cartesian_reject_arms():
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match="expected an arm for the joint-space family 'joint_sinusoid'"):
        tj.joint_sinusoid(FREE, rng, duration_s=1.0)
    with pytest.raises(InputError, match="expected an arm for the joint-space family 'joint_waypoints'"):
        tj.joint_waypoints(FREE, rng, n_waypoints=3)
    with pytest.raises(InputError, match="expected the free-floating 'free6d' for the Cartesian family"):
        tj.cartesian_cone(get_robot("ur5"), rng, cone_half_angle_deg=10.0)
    with pytest.raises(InputError, match="subset: expected one of"):
        tj.excited_joints(get_robot("ur5"), "elbow", rng)
    with pytest.raises(InputError, match="n_waypoints: expected an integer >= 2, got 1"):
        tj.cartesian_cone(FREE, rng, cone_half_angle_deg=10.0, n_waypoints=1)
    traj = tj.cartesian_cone(FREE, rng, cone_half_angle_deg=10.0)
    with pytest.raises(InputError, match="expected a joint-space trajectory"):
        traj.joint_positions(np.zeros(3))


# --------------------------------------------------------------------------- #
# joint waypoints
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ARMS)
def test_joint_waypoints_limits_speed_and_dwells(name):
    robot = get_robot(name)
    rng = np.random.default_rng(11)
    traj = tj.joint_waypoints(robot, rng, n_waypoints=8, sampling_mode="stations")
    _check_joint_physics(robot, traj, 0.25)
    # captures at the middle of every dwell: at rest, exactly on the waypoints
    ts = traj.station_times_s
    assert ts.size == 8
    assert np.allclose(traj.joint_positions(ts), traj.knots_q_rad, atol=0, rtol=0)
    assert np.all(traj.joint_velocities(ts) == 0)
    # the dwells and moves as the robot does them, read off a 1 ms sampling: the robot stands still for 0.6-1.4 s
    # at each waypoint (a dwell drawn for each) and every move between two of them lasts at least 0.4 s
    t = np.arange(0.0, traj.duration_s, 1e-3)
    still = np.all(traj.joint_velocities(t) == 0, axis=1)
    edges = np.flatnonzero(np.diff(still.astype(np.int8))) + 1
    runs = np.split(np.arange(t.size), edges)
    still_s = np.array([t[r[-1]] - t[r[0]] for r in runs if still[r[0]]])
    move_s = np.array([t[r[-1]] - t[r[0]] for r in runs if not still[r[0]]])
    assert still_s.size == 8 and move_s.size == 7
    assert np.all((still_s >= 0.6 - 2e-3) & (still_s <= 1.4 + 1e-3))
    assert np.all(move_s >= 0.4 - 2e-3)
    assert np.allclose(still_s, traj.schedule.dwell_s, atol=2e-3) and np.ptp(still_s) > 0.05  # drawn, not fixed
    # every capture is the middle of its still interval
    mids = np.array([0.5 * (t[r[0]] + t[r[-1]]) for r in runs if still[r[0]]])
    assert np.allclose(mids, ts, atol=1.5e-3)
    # every segment reaches the speed cap on its slowest-allowed joint (time-optimal for min-jerk)
    mid = traj.schedule.arrive_s[:-1] + traj.schedule.dwell_s[:-1] + 0.5 * traj.schedule.segment_s
    ratio = np.abs(traj.joint_velocities(mid)) / (0.25 * robot.qd_max_rad_s)
    long_seg = traj.schedule.segment_s > tj.MIN_SEGMENT_S
    assert np.allclose(ratio.max(axis=1)[long_seg], 1.0)


@pytest.mark.parametrize("name", ["ur5e", "panda", "puma560"])
def test_joint_waypoints_spread_is_a_fraction_of_each_joints_range(name):
    """Waypoints fill a box of +-15 % of each joint's range around a centre near home, inside the limits."""
    robot = get_robot(name)
    span = robot.q_max_rad - robot.q_min_rad
    half = np.minimum(tj.WAYPOINT_SPREAD_FRACTION * span, 0.5 * (span - 2 * tj.LIMIT_MARGIN_RAD))
    knots = np.concatenate([tj.joint_waypoints(robot, np.random.default_rng([5, k]), n_waypoints=50).knots_q_rad
                            for k in range(8)])  # fmt: skip
    assert np.all(knots >= robot.q_min_rad + tj.LIMIT_MARGIN_RAD) and np.all(knots <= robot.q_max_rad - tj.LIMIT_MARGIN_RAD)
    # per sequence the knots of a joint span at most the box, and nearly all of it with 50 draws
    for k in range(8):
        kk = knots[50 * k:50 * (k + 1)]
        width = kk.max(axis=0) - kk.min(axis=0)
        assert np.all(width <= 2 * half + 1e-12) and np.all(width >= 1.7 * half)
        # the box's centre lies within 10 % of the range from home (or was moved inward by the limits)
        mid = 0.5 * (kk.max(axis=0) + kk.min(axis=0))
        assert np.all(np.abs(mid - robot.home_q_rad) <= tj.WAYPOINT_CENTRE_FRACTION * span + 0.1 * half + 1e-9)


def test_joint_waypoint_stations_turn_as_far_as_the_published_ones():
    """UR arms (+-360 deg joints) turn about 120 deg between waypoints, a Panda less (its joints span less)."""
    def mean_turn(name):
        robot = get_robot(name)
        out = []
        for k in range(20):
            q = tj.joint_waypoints(robot, np.random.default_rng([6, k]), n_waypoints=20).knots_q_rad
            R = robot.fk(q)[:, :3, :3]
            rel = np.einsum("nji,njk->nik", R[:-1], R[1:])
            out.append(np.degrees(np.arccos(np.clip((np.trace(rel, axis1=1, axis2=2) - 1) / 2, -1, 1))).mean())
        return float(np.mean(out))

    ur, panda = mean_turn("ur5e"), mean_turn("panda")
    assert 100.0 < ur < 140.0, ur
    assert 55.0 < panda < ur, panda


def test_joint_waypoints_continuous_covers_duration():
    robot = get_robot("panda")
    traj = tj.joint_waypoints(robot, np.random.default_rng(2), n_waypoints=3, sampling_mode="continuous",
                              duration_s=60.0)  # fmt: skip
    assert traj.duration_s == 60.0
    assert traj.schedule.total_s >= 60.0
    # the three waypoints are toured repeatedly, never twice in a row
    knots = traj.knots_q_rad
    assert knots.shape[0] > 3
    assert np.all(np.abs(np.diff(knots, axis=0)).max(axis=1) > 0)
    _check_joint_physics(robot, traj, 0.25)


# --------------------------------------------------------------------------- #
# look-at stations
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["ur3", "ur10e", "panda", "iiwa7", "irb120", "puma560", "free6d"])
@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_lookat_target_visible_at_every_station(name, configuration):
    robot = get_robot(name)
    rng = np.random.default_rng(5)
    X = tj.sample_hand_eye(rng, configuration)
    target = CHECKER if configuration == "eye_in_hand" else MARKER
    traj, Y, info = tj.lookat(robot, X, configuration, HD, target, rng, n_stations=15)
    assert traj.family == "lookat" and traj.station_times_s.size == 15
    assert info.n_candidates >= 15 and info.n_reachable >= 15
    T = traj.flange_poses(traj.station_times_s, None if robot.is_free else robot)
    if configuration == "eye_in_hand":
        T_cam_target = se3.invert_transform(T @ X) @ Y
    else:
        T_cam_target = se3.invert_transform(Y) @ T @ X
    assert visibility(HD, target, T_cam_target).visible.all()
    W = info.centre_m
    if configuration == "eye_to_hand":
        d = np.linalg.norm(Y[:3, 3] - W)
        assert tj.LOOKAT_CAMERA_DISTANCE_M[0] - 1e-9 <= d <= tj.LOOKAT_CAMERA_DISTANCE_M[1] + 1e-9
        assert np.allclose(Y[:3, 3] + d * Y[:3, 2], W, atol=1e-9)  # looking at W
        assert Y[0, 3] > W[0] - 1e-9 or robot.is_free  # in front of the robot
    else:
        assert np.allclose(Y[:3, 3], W)
        # a board on a table in front of the robot, below its shoulder, tilted up towards the base axis
        tilt = np.degrees(np.arccos(np.clip(Y[2, 2], -1, 1)))
        assert 0 <= tilt <= tj.LOOKAT_BOARD_TILT_DEG + 1e-9
        if not robot.is_free:
            rho = np.hypot(Y[0, 3], Y[1, 3]) / robot.reach_m
            assert tj.LOOKAT_BOARD_RADIUS_REACH[0] - 1e-9 <= rho <= tj.LOOKAT_BOARD_RADIUS_REACH[1] + 1e-9
            assert abs(np.degrees(np.arctan2(Y[1, 3], Y[0, 3]))) <= tj.LOOKAT_BOARD_AZIMUTH_DEG + 1e-9
            lo, hi = (robot.d_m[0] + f * robot.reach_m for f in tj.LOOKAT_BOARD_HEIGHT_REACH)
            assert lo - 1e-9 <= Y[2, 3] <= hi + 1e-9  # a table below the shoulder
            assert np.dot(Y[:2, 2], Y[:2, 3]) <= 1e-9  # the normal leans towards the base axis
    if not robot.is_free:
        _check_joint_physics(robot, traj, 0.25)


def test_lookat_reports_failure(monkeypatch):
    """No station ever sees the target: a ConvergenceError that says what was tried."""

    class Never:
        def __init__(self, n):
            self.visible = np.zeros(n, dtype=bool)

    monkeypatch.setattr(tj, "visibility", lambda cam, tgt, T: Never(np.asarray(T).shape[0]))
    rng = np.random.default_rng(0)
    X = tj.sample_hand_eye(rng, "eye_in_hand")
    with pytest.raises(ConvergenceError, match=r"lookat: expected 5 reachable stations .* got 0 after"):
        tj.lookat(get_robot("ur5e"), X, "eye_in_hand", HD, CHECKER, rng, n_stations=5)


def test_viewing_distance_frames_the_board():
    for cam in ("vga", "hd", "fhd", "industrial_5mp"):
        c = get_camera(cam)
        lo, hi = tj.viewing_distance_range(c, CHECKER)
        assert 0.15 <= lo < hi <= 4.0
        # fronto-parallel at the near end, every point is in the image
        T = np.array([[1.0, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, lo], [0, 0, 0, 1]])
        assert visibility(c, CHECKER, T[None]).visible[0]


# --------------------------------------------------------------------------- #
# free6d families
# --------------------------------------------------------------------------- #
def _keyframe_scatter(traj):
    T = traj.knots_T
    rel = se3.invert_transform(T[:-1]) @ T[1:]
    return rotation_axis_scatter(rel[:, :3, :3]), np.degrees(se3.rotation_angle(rel[:, :3, :3]))


def test_cartesian_cone_degeneracy_dial():
    rng = np.random.default_rng(4)
    lam2 = {}
    for half in (0.0, 2.0, 10.0, 45.0, 90.0):
        vals = []
        for _ in range(5):
            traj = tj.cartesian_cone(FREE, rng, cone_half_angle_deg=half, rot_angle_range_deg=(8, 15),
                                     n_waypoints=20, trans_range_m=0.15)  # fmt: skip
            ev, ang = _keyframe_scatter(traj)
            assert np.all((ang >= 8 - 1e-9) & (ang <= 15 + 1e-9))
            p = traj.knots_T[:, :3, 3] - np.array(tj.FREE6D_WORKSPACE_CENTRE_M)
            assert np.all(np.abs(p) <= 0.15 + 1e-12) and np.abs(p).max() > 0.1  # a cube of half-side trans_range_m
            vals.append(ev[1])
        lam2[half] = float(np.mean(vals))
    assert lam2[0.0] < 1e-12  # one axis: rotation of X unobservable
    assert lam2[2.0] < 1e-3
    assert lam2[2.0] < lam2[10.0] < lam2[45.0] < lam2[90.0]
    assert lam2[90.0] > 0.1


def test_cartesian_cone_station_and_continuous_sampling():
    rng = np.random.default_rng(8)
    st = tj.cartesian_cone(FREE, rng, cone_half_angle_deg=30, n_waypoints=6, sampling_mode="stations")
    assert np.allclose(st.flange_poses(st.station_times_s), st.knots_T, atol=1e-12)
    ct = tj.cartesian_cone(FREE, rng, cone_half_angle_deg=30, n_waypoints=6, sampling_mode="continuous",
                           duration_s=12.0)  # fmt: skip
    assert ct.duration_s == pytest.approx(12.0) and ct.schedule.total_s == pytest.approx(12.0)
    T = ct.flange_poses(np.linspace(0, 12, 1201))
    se3.check_transforms(T)
    assert np.allclose(T[0], ct.knots_T[0]) and np.allclose(T[-1], ct.knots_T[-1])
    # smooth: no jump between neighbouring samples
    rel = se3.invert_transform(T[:-1]) @ T[1:]
    assert np.degrees(se3.rotation_angle(rel[:, :3, :3])).max() < 2.0


def test_proposal_sine():
    rng = np.random.default_rng(9)
    traj = tj.proposal_sine(FREE, rng, duration_s=20.0, sampling_mode="stations")
    assert np.allclose(traj.station_times_s, np.linspace(0, 20, tj.PROPOSAL_SINE_N_KEYFRAMES))
    T = traj.flange_poses(traj.key_times_s)
    assert np.allclose(T[:, :3, :3], traj.key_R, atol=1e-12)
    # the translation is the published one on its 10 s time base u = 10 t / duration:
    # x = 0.5 + 0.5 sin(0.5 u), y = 0.3 cos(0.7 u), z = 0.5 + 0.2 sin(0.3 u); for the smoke copy's 4 s sequences
    # x = 0.5 + 0.5 sin(1.25 t), y = 0.3 cos(1.75 t), z = 0.5 + 0.2 sin(0.75 t) (fitted to its flange poses)
    for duration, tr in ((20.0, traj), (4.0, tj.proposal_sine(FREE, np.random.default_rng(9), duration_s=4.0))):
        t = np.linspace(0, duration, 2001)
        u = 10.0 * t / duration
        p = tr.flange_poses(t)[:, :3, 3]
        expected = np.stack([0.5 + 0.5 * np.sin(0.5 * u), 0.3 * np.cos(0.7 * u), 0.5 + 0.2 * np.sin(0.3 * u)], axis=1)
        assert np.allclose(p, expected, atol=1e-12)
    smoke = np.stack([0.5 + 0.5 * np.sin(1.25 * t), 0.3 * np.cos(1.75 * t), 0.5 + 0.2 * np.sin(0.75 * t)], axis=1)
    assert np.allclose(p, smoke, atol=1e-12)
    # keyframe orientations independent and uniform on SO(3): over many, the mean angle between neighbours
    # is that of two uniform rotations (pi/2 + 2/pi = 2.2 rad), far from small perturbations of one orientation
    R = tj.proposal_sine(FREE, np.random.default_rng(10), duration_s=20.0, n_keyframes=2001).key_R
    ang = se3.rotation_angle(np.swapaxes(R[:-1], 1, 2) @ R[1:])
    assert abs(ang.mean() - (np.pi / 2 + 2 / np.pi)) < 0.05
    # constant angular rate between keyframes, within free6d's speed caps
    td = np.linspace(0, 4, 4001)
    Td = tj.proposal_sine(FREE, np.random.default_rng(11), duration_s=4.0).flange_poses(td)
    rel = se3.invert_transform(Td[:-1]) @ Td[1:]
    w = se3.rotation_angle(rel[:, :3, :3]) / np.diff(td)
    v = np.linalg.norm(np.diff(Td[:, :3, 3], axis=0), axis=1) / np.diff(td)
    # the translation's speed is bounded by that of the three sines at their peaks together
    bound = np.linalg.norm(np.multiply(tj.PROPOSAL_SINE_AMPLITUDE_M, tj.PROPOSAL_SINE_OMEGA_RAD_S) * 10.0 / 4.0)
    assert v.max() <= bound + 1e-9 and v.max() > 0.5 * bound
    seg = np.searchsorted(np.linspace(0, 4, tj.PROPOSAL_SINE_N_KEYFRAMES), td[:-1], side="right") - 1
    for k in range(tj.PROPOSAL_SINE_N_KEYFRAMES - 1):
        wk = w[(seg == k)][5:-5]
        assert np.ptp(wk) < 1e-6 * max(1.0, wk.mean())


# --------------------------------------------------------------------------- #
# step 3: world placement
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_place_world_keeps_the_best_candidate(configuration):
    robot = get_robot("ur5e")
    rng = np.random.default_rng(12)
    X = tj.sample_hand_eye(rng, configuration)
    traj = tj.joint_sinusoid(robot, rng, duration_s=20)
    T = traj.flange_poses(np.linspace(0, 20, 60), robot)
    target = CHECKER if configuration == "eye_in_hand" else MARKER
    Y, info = tj.place_world(T, X, configuration, HD, target, np.random.default_rng(1))
    if configuration == "eye_in_hand":
        T_ct = se3.invert_transform(T @ X) @ Y
    else:
        T_ct = se3.invert_transform(Y) @ T @ X
    n_vis = int(visibility(HD, target, T_ct).visible.sum())
    assert n_vis == info["n_visible"] > 0
    # the same draws with a single candidate can only do worse or equal
    Y1, info1 = tj.place_world(T, X, configuration, HD, target, np.random.default_rng(1), n_candidates=1)
    assert info1["n_visible"] <= info["n_visible"]


# --------------------------------------------------------------------------- #
# step 4: clocks
# --------------------------------------------------------------------------- #
def test_clocks_sync_and_stations():
    rng = np.random.default_rng(0)
    c = tj.make_clocks(rng, sampling_mode="continuous", sync="sync", duration_s=20, camera_rate_hz=30,
                       robot_rate_hz=500)  # fmt: skip
    assert c.t_robot_s.size == 600 and np.array_equal(c.t_robot_s, c.t_camera_s)
    assert np.array_equal(c.t_camera_s, c.t_camera_gt_s) and c.robot_rate_hz == 30 and c.same_clock
    assert np.allclose(np.diff(c.t_camera_s), 1 / 30)
    st = tj.make_clocks(rng, sampling_mode="stations", sync="sync", duration_s=1, camera_rate_hz=30,
                        robot_rate_hz=500, station_times_s=[0.25, 3.0, 7.5])  # fmt: skip
    assert np.array_equal(st.t_robot_s, [0.25, 3.0, 7.5]) and np.array_equal(st.t_camera_s, st.t_robot_s)
    assert math.isnan(st.robot_rate_hz) and math.isnan(st.camera_rate_hz)


def test_clocks_async_statistics():
    rng = np.random.default_rng(42)
    dur, rate, off, jit, drop = 200.0, 30.0, 0.05, 0.002, 0.1
    c = tj.make_clocks(rng, sampling_mode="continuous", sync="async", duration_s=dur, camera_rate_hz=rate,
                       robot_rate_hz=500.0, time_offset_s=off, time_jitter_std_s=jit,
                       camera_drop_fraction=drop)  # fmt: skip
    # robot stream: the controller rate, both ends included
    assert c.t_robot_s.size == 100_001 and c.t_robot_s[-1] == pytest.approx(dur)
    # camera slots: a random phase within one period, one slot per period
    slots = int(dur * rate)
    assert 0 <= c.phase_s < 1 / rate
    k = np.round((c.t_camera_gt_s - c.phase_s) * rate)
    assert np.allclose(c.t_camera_gt_s, c.phase_s + k / rate)
    assert c.t_camera_gt_s[-1] < dur and c.t_camera_gt_s[0] >= c.t_robot_s[0]
    # drops: Bernoulli with the given probability (3 sigma)
    n_drop = slots - c.t_camera_s.size
    assert n_drop == c.n_dropped
    assert abs(n_drop - drop * slots) < 3 * math.sqrt(slots * drop * (1 - drop))
    # stamps = t_gt + offset + jitter; jitter ~ N(0, jit^2): mean and std within sampling error
    e = c.t_camera_s - c.t_camera_gt_s - off
    n = e.size
    assert np.allclose(e, c.jitter_s)
    assert abs(e.mean()) < 4 * jit / math.sqrt(n)
    assert abs(e.std() / jit - 1) < 0.05
    assert np.all(np.diff(c.t_camera_s) > 0)


def test_clocks_jitter_stays_ordered_when_large():
    """Jitter comparable to the frame period is redrawn so that the stamps stay strictly increasing."""
    rng = np.random.default_rng(3)
    c = tj.make_clocks(rng, sampling_mode="continuous", sync="async", duration_s=100, camera_rate_hz=60,
                       robot_rate_hz=100, time_jitter_std_s=0.008)  # fmt: skip
    assert np.all(np.diff(c.t_camera_s) > 0)
    # conditioning on the order trims the tails a little, no more
    assert 0.85 < c.jitter_s.std() / 0.008 < 1.02


def test_world_reference_is_never_inside_the_robot():
    # flange z points down at every home pose: the static camera sits under the marker looking up at it, below the
    # base plane when the flange is low (as in the published tiers), never inside the robot's base column
    from kinhec.synth.generator import simulate
    from kinhec.synth.recipe import Recipe

    for s, robot in enumerate(("ur5e", "panda", "iiwa14", "irb120", "puma560", "ur10e") * 2):
        for conf in ("eye_in_hand", "eye_to_hand"):
            g = simulate(Recipe(seed=600 + s, robot=robot, configuration=conf, family="joint_sinusoid",
                                duration_s=4.0))  # fmt: skip
            assert np.hypot(g.Y[0, 3], g.Y[1, 3]) >= tj.BASE_CLEARANCE_M  # not inside the robot's base column
            if conf == "eye_to_hand":
                assert g.visible.mean() > 0.5  # the static camera still sees the marker most of the time


def test_cone_keyframes_turn_both_ways():
    # a random sign per step: the orientation wanders instead of turning on and on (up to 570 deg) away from
    # the board; the axis lines stay in the cone
    rng = np.random.default_rng(3)
    traj = tj.cartesian_cone(get_robot("free6d"), rng, n_waypoints=40, cone_half_angle_deg=10.0,
                             rot_angle_range_deg=(15.0, 30.0), trans_range_m=0.15)  # fmt: skip
    ang = np.asarray(traj.to_dict()["rot_angle_deg"])
    assert ang.size == 39 and (ang > 0).any() and (ang < 0).any()
    assert np.all((np.abs(ang) >= 15.0) & (np.abs(ang) <= 30.0))


@pytest.mark.parametrize("robot, target", [("ur3", "checker_9x6_25mm"), ("irb120", "checker_9x6_25mm"),
                                           ("ur5e", "grid_10x8_60mm"), ("panda", "grid_10x8_60mm")])
def test_lookat_board_is_seen_from_every_station(robot, target):
    from kinhec.synth.generator import simulate
    from kinhec.synth.recipe import Recipe

    for s in range(4):
        g = simulate(Recipe(seed=700 + s, robot=robot, family="lookat", sampling_mode="stations", n_stations=8,
                            target=target))  # fmt: skip
        assert np.hypot(g.Y[0, 3], g.Y[1, 3]) >= tj.BASE_CLEARANCE_M  # not inside the robot's base column
        assert g.visible.all()


@pytest.mark.parametrize("robot", ["ur5e", "panda", "iiwa14", "irb120"])
def test_parallel_subset_keeps_the_axes_parallel(robot):
    from kinhec.geometry.motion import relative_motions, rotation_axis_scatter

    model = get_robot(robot)
    for s in range(3):
        traj = tj.joint_sinusoid(model, np.random.default_rng(40 + s), duration_s=10.0, subset="parallel")
        T = traj.flange_poses(np.linspace(0.0, 10.0, 120), model)
        lam = rotation_axis_scatter(relative_motions(T)[:, :3, :3])
        assert lam[1] < 1e-10, (robot, s, lam)
