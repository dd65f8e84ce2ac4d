"""Hand and eye recordings with a known truth, the input of the calibrate tests: kinhec's station recording, streams
on one clock, kinhec sequences exported as TUM, a motion-capture rig folder, a run of repeated rows."""

from __future__ import annotations

import numpy as np

from kinhec import io as kio
from kinhec.geometry import se3
from kinhec.dataset.export import export_sequence
from kinhec.synth.generator import generate_sequence
from kinhec.synth.recipe import Recipe

#: A station recording on a UR5e: look-at path, Gaussian robot and camera pose noise (the calibrate tests'
#: generated input; ``n_stations`` and ``seed`` are varied).
STATIONS = dict(sequence_id="noise-000000", track="noise", seed=11, robot="ur5e", configuration="eye_in_hand",
                family="lookat", sampling_mode="stations", n_stations=25, camera="hd",
                robot_noise_models=("se3_gaussian",), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4,
                camera_noise_model="se3_gaussian", camera_rot_std_rad=1e-3, camera_trans_std_m=3e-4,
                camera_trans_std_z_m=1e-3)  # fmt: skip


def lens_recipe(**change) -> dict:
    """A look-at station recording on a UR5e through a VGA camera with PnP pose noise (0.08 px), for the generated
    corners of :func:`kinhec.synth.observations.fisheye_observations_from_recipe` (``sequence_id`` and ``seed``
    given by the caller)."""
    r = dict(robot="ur5e", configuration="eye_in_hand", family="lookat", sampling_mode="stations", n_stations=15,
             camera="vga", target="grid_10x8_60mm", camera_noise_model="pnp", pixel_std=0.08,
             robot_noise_models=("se3_gaussian",), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4)  # fmt: skip
    r.update(change)
    return r


def small_pnp_tier(root, n_stations: int = 8):
    """The smoke tier cut to one eye-in-hand ``pnp`` sequence of ``n_stations`` stations (UR5e, VGA camera, 9x6
    chessboard of 25 mm), generated into ``root / "data"``."""
    import yaml

    from kinhec.synth import tiers
    from kinhec.synth.runner import generate_dataset

    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    cfg["tracks"] = {"pnp": dict(cfg["tracks"]["pnp"], robots=["ur5e"], configurations=["eye_in_hand"],
                                 cameras=["vga"], n_stations=n_stations)}  # fmt: skip
    (root / "tier.yaml").write_text(yaml.safe_dump(cfg))
    assert generate_dataset(root / "tier.yaml", root / "data", workers=1, progress=False).ok
    return root / "data"


# --------------------------------------------------------------------------- #
# stamped T_base_ee and T_cam_target on one clock, written as TUM
# --------------------------------------------------------------------------- #
X_TRUE = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.05, 0.09])
Y_TRUE = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.0, 0.2]), [0.8, 0.1, -0.2])


def streams(rng, n=40, *, axis=None, noise=True):
    """Stamped ``T_base_ee`` and ``T_cam_target`` (eye-in-hand) on one clock; ``axis`` makes every rotation about it."""
    t = np.arange(n) * 0.5
    if axis is None:
        w = rng.normal(0, 0.5, (n, 3))
    else:
        w = np.outer(rng.uniform(-1.0, 1.0, n), axis)
    A = se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal([0.5, 0, 0.4], 0.15, (n, 3)))
    T_cam_target = se3.invert_transform(A @ X_TRUE) @ Y_TRUE
    if noise:
        T_cam_target = T_cam_target @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 5e-4, (n, 3))])
        A = A @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (n, 3)), rng.normal(0, 2e-4, (n, 3))])
    return t, A, T_cam_target


def write_tum(path, t, T, *, header=True):
    q = se3.quaternion_from_matrix(T[:, :3, :3])  # w x y z
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    lines = (["# timestamp tx ty tz qx qy qz qw"] if header else []) + [" ".join(repr(v) for v in r) for r in rows.tolist()]
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------------- #
# a kinhec sequence written as a dataset and exported as TUM
# --------------------------------------------------------------------------- #
NOISE = dict(robot_noise_models=("se3_gaussian",), camera_noise_model="se3_gaussian", robot_rot_std_rad=2e-4,
             robot_trans_std_m=2e-4, camera_rot_std_rad=1e-3, camera_trans_std_m=1e-3, camera_trans_std_z_m=2e-3)


def exported(root, k, **kw):
    """A kinhec sequence written as a dataset and exported as TUM: (Sequence, hand file, eye file)."""
    recipe = dict(sequence_id=f"noise-{k:06d}", track="noise", level="test", seed=300 + k, robot="ur5e",
                  configuration="eye_in_hand", family="joint_sinusoid", camera="hd", sampling_mode="continuous",
                  duration_s=12.0, camera_rate_hz=30.0, **NOISE)  # fmt: skip
    recipe.update(kw)
    tables = generate_sequence(Recipe.from_dict(recipe))
    kio.write_index(root, kio.write_shard(root, "noise", k, [tables]))
    sid = recipe["sequence_id"]
    export_sequence(root, sid, "tum", root / "tum")
    seq = kio.load_sequence(root, sid)
    # kinhec's TUM export writes the moving body in the fixed frame: the camera in the target frame (eye-in-hand),
    # the marker in the camera frame (eye-to-hand); calibrate is told which (EYE_POSE)
    eye = "target_cam" if seq.configuration == "eye_in_hand" else "cam_marker"
    return seq, root / "tum" / f"{sid}_base_ee_meas.tum", root / "tum" / f"{sid}_{eye}_meas.tum"


#: ``eye_pose`` of the exported eye file, per configuration.
EYE_POSE = {"eye_in_hand": "target_T_cam", "eye_to_hand": "cam_T_target"}


# --------------------------------------------------------------------------- #
# a 3-camera rig in the layout of a mocap rig folder (gt_poses/camNN_poses.txt)
# --------------------------------------------------------------------------- #
def _tum(path, t, T):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    path.write_text("".join(" ".join(repr(v) for v in r) + "\n" for r in rows.tolist()))


def rig(tmp_path, rng, n=80, cams=3):
    t = np.arange(n) / 10.0
    body = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, (n, 3))), rng.normal(0, 0.5, (n, 3)))
    X = {f"cam{k + 1:02d}": se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 1.0, 3)),
                                                                     rng.normal(0, 0.15, 3)) for k in range(cams)}
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.3]), [0.004, -0.03, -0.03])
    (tmp_path / "gt_poses").mkdir()
    for name, Xk in X.items():
        world_T_cam = se3.invert_transform(Y) @ body @ Xk  # camera-to-world in the mocap world
        # mocap-like noise: orientation error of the body, position error in the world
        world_T_cam[:, :3, :3] = world_T_cam[:, :3, :3] @ se3.so3_exp(rng.normal(0, 2e-3, (n, 3)))
        world_T_cam[:, :3, 3] += rng.normal(0, 2e-3, (n, 3))
        _tum(tmp_path / "gt_poses" / f"{name}_poses.txt", t, world_T_cam)
    _tum(tmp_path / "body.tum", t, body)
    return X


# --------------------------------------------------------------------------- #
# unstamped pairs in row order with a run of repeated rows (the multi-camera set of the issue)
# --------------------------------------------------------------------------- #
def static_run_analogue(seed=0, n=60, n_static=26, noise_mm=30.0, noise_deg=1.0):
    """One camera of a motion-capture rig seeing a tag, pairs in row order: a smooth path with 51 deg of rotation,
    30 mm / 1 deg of noise on the tag poses, and a run of ``n_static`` rows where nothing moved (the same pair
    written again and again).  Returns ``(A = T_world_body, C = T_cam_tag, X = T_body_cam, Y = T_world_tag)``."""
    rng = np.random.default_rng(seed)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.2, -1.4, 0.3]), [0.06, 0.09, 0.04])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.7]), [2.0, 0.5, 1.2])
    s = np.linspace(0, 1, n)
    half = np.radians(51.0) / 2
    ang = np.c_[0.5 * half * np.sin(2 * np.pi * 2.1 * s + 1), half * np.sin(2 * np.pi * 1.3 * s + 2),
                0.3 * half * np.sin(2 * np.pi * 0.7 * s + 3)]
    dist = 1.2 + 2.8 * (0.5 + 0.5 * np.sin(2 * np.pi * 0.9 * s + 4))
    R_tc = se3.so3_exp(ang) @ se3.so3_exp([np.pi, 0, 0])  # the camera looks at the tag
    T_tag_cam = se3.transform_from_rotation_translation(R_tc, -np.einsum("nij,nj->ni", R_tc, np.c_[0 * s, 0 * s, dist]))
    A = Y @ T_tag_cam @ se3.invert_transform(X)
    C = se3.invert_transform(T_tag_cam) @ se3.se3_exp(np.c_[rng.normal(0, np.radians(noise_deg), (n, 3)),
                                                            rng.normal(0, noise_mm * 1e-3, (n, 3))])
    run_ = slice(n // 3, n // 3 + n_static)
    A[run_], C[run_] = A[n // 3], C[n // 3]
    return A, C, X, Y


# --------------------------------------------------------------------------- #
# machines that turn about one axis: SCARA, a 4-axis palletiser, an XY-theta gantry
# --------------------------------------------------------------------------- #
#: The flange of each machine at theta = 0 in the base (its rotation) and what each station draws.
ONE_AXIS_MACHINES = ("scara", "palletiser", "gantry")
_FLANGE_DOWN = np.diag([1.0, -1.0, -1.0])


def one_axis_hand(rng, machine: str, n: int, *, flange=None) -> np.ndarray:
    """``T_base_ee`` of ``n`` stations of a machine whose flange turns about the base's vertical only.

    ``scara``: two arm joints in the horizontal plane (links 0.35 m and 0.3 m), a vertical stroke, the wrist
    about the vertical, flange pointing down; ``palletiser``: the column's turn, a reach and a height (a
    parallelogram arm keeps the flange level), a wrist turn, flange down; ``gantry``: x, y, z travels and a
    turn about the vertical, flange pointing up.  ``flange`` replaces the flange's rotation at theta = 0.
    """
    if machine == "scara":
        q1, q2, q4 = rng.uniform(-1.4, 1.4, n), rng.uniform(-2.0, 2.0, n), rng.uniform(-1.5, 1.5, n)
        x = 0.35 * np.cos(q1) + 0.3 * np.cos(q1 + q2)
        y = 0.35 * np.sin(q1) + 0.3 * np.sin(q1 + q2)
        t = np.c_[x, y, rng.uniform(0.05, 0.25, n)]
        th, R0 = q1 + q2 + q4, _FLANGE_DOWN
    elif machine == "palletiser":
        q1, reach, q4 = rng.uniform(-1.2, 1.2, n), rng.uniform(0.8, 1.6, n), rng.uniform(-1.0, 1.0, n)
        t = np.c_[reach * np.cos(q1), reach * np.sin(q1), rng.uniform(0.3, 1.5, n)]
        th, R0 = q1 + q4, _FLANGE_DOWN
    elif machine == "gantry":
        t = np.c_[rng.uniform(0.0, 1.2, n), rng.uniform(0.0, 0.8, n), rng.uniform(0.1, 0.5, n)]
        th, R0 = rng.uniform(-1.5, 1.5, n), np.eye(3)
    else:
        raise ValueError(machine)
    R0 = R0 if flange is None else np.asarray(flange)
    return se3.transform_from_rotation_translation(se3.so3_exp(np.outer(th, [0.0, 0.0, 1.0])) @ R0, t)


#: The truth of the one-axis recordings, per setup: ``X`` (``T_ee_cam`` / ``T_ee_marker``) and ``Y``
#: (``T_base_target`` / ``T_base_cam``).
ONE_AXIS_TRUTH = {
    "eye_in_hand": (se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.4]), [0.03, -0.04, 0.08]),
                    se3.transform_from_rotation_translation(se3.so3_exp([3.0, 0.1, 0.2]), [0.4, 0.05, -0.3])),
    "eye_to_hand": (se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.4]), [0.02, 0.01, 0.06]),
                    se3.transform_from_rotation_translation(se3.so3_exp([2.2, 0.0, 0.0]), [0.4, -0.8, 0.5])),
}


def one_axis_recording(rng, machine: str, setup: str, n: int, *, noise: bool = True, flange=None,
                       scale_std: float = 0.005):
    """Hand poses ``T_base_ee`` and eye poses ``T_cam_target`` (``T_cam_marker`` eye-to-hand) of ``n`` stations of
    a one-axis machine (:func:`one_axis_hand`), with the truth ``(X, Y)`` of :data:`ONE_AXIS_TRUTH`.

    Noise: the camera pose 1 mrad / 0.5 mm (in its own frame), the robot 0.2 mrad / 0.2 mm (flange frame: its
    rotation noise tilts the axis by about 0.2 mrad), and the board's scale drawn from calibrate's prior for it
    (``exp(N(0, scale_std^2))``).  Returns ``(A, C, X, Y)``.
    """
    X, Y = ONE_AXIS_TRUTH[setup]
    A = one_axis_hand(rng, machine, n, flange=flange)
    C = se3.invert_transform(A @ X) @ Y if setup == "eye_in_hand" else se3.invert_transform(Y) @ A @ X
    if noise:
        C = C @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 5e-4, (n, 3))])
        C[:, :3, 3] *= np.exp(rng.normal(0, scale_std))
        A = A @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (n, 3)), rng.normal(0, 2e-4, (n, 3))])
    return A, C, X, Y


def write_matrices(path, T):
    """Poses as one row-major 4x4 per line (the ``rwhe`` format)."""
    path.write_text("".join(" ".join(repr(float(v)) for v in M.reshape(-1)) + "\n" for M in T))
    return path


# --------------------------------------------------------------------------- #
# a mixed-track recording on one clock, written as TUM and calibrated
# --------------------------------------------------------------------------- #
#: A mixed-track recipe on one clock: a joint-waypoint path toured repeatedly, PnP camera poses, 11 % random-pose
#: outliers (the small tier's mixed-000142 with seed 2, a scene whose angular speeds correlate best at a wrong lag, so
#: that the fit from the correlation peak ends worse than one from a zero offset; seed 32 was such a scene until the
#: dwells came to be drawn in 0.6-1.4 s, seed 3 until the board came to be placed along the motion as published;
#: other seeds give the scenes of tests/test_calibrate_honesty_mixed.py).
MIXED_ONE_CLOCK = dict(
    sequence_id="mixed-000142", track="mixed", seed=2, robot="ur5e", configuration="eye_in_hand",
    family="joint_waypoints", sampling_mode="continuous", duration_s=22.0, camera_rate_hz=60.0, n_stations=6,
    camera="industrial_5mp", target="checker_7x5_20mm", sync="sync", world_frame="target",
    robot_noise_models=("se3_gaussian", "joint_gaussian"), robot_rot_std_rad=0.002529937889332934,
    robot_trans_std_m=6.147730048142034e-05, joint_std_rad=0.00017251356998071343, camera_noise_model="pnp",
    pixel_std=0.1018441698447176, outlier_fraction=0.11183227754001909, outlier_model="random_pose", level="random",
)  # fmt: skip


def calibrated_mixed(tmp_path, **change):
    """``MIXED_ONE_CLOCK`` (with ``change``) simulated, its streams written as TUM (the camera's rows where the target
    was seen) and calibrated eye-in-hand from ``cam_T_target`` rows: ``(simulation, result)``."""
    import warnings

    from kinhec.calibrate import calibrate
    from kinhec.synth.generator import simulate

    g = simulate(dict(MIXED_ONE_CLOCK, **change))
    ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
    write_tum(tmp_path / "hand.txt", g.t_robot_s, g.T_base_ee_meas)
    write_tum(tmp_path / "eye.txt", g.t_camera_s[ok], g.T_cam_target_meas[ok])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = calibrate(tmp_path / "hand.txt", tmp_path / "eye.txt", fmt="tum", setup="eye_in_hand",
                        eye_pose="cam_T_target")  # fmt: skip
    return g, res


#: The camera of :func:`one_axis_corners`: a pinhole without distortion, ``fx fy cx cy`` [px] (its intrinsics are
#: given to calibrate: a board always seen parallel to the image does not determine the focal length).
CORNERS_CAMERA = np.array([800.0, 800.0, 640.0, 480.0, 0.0, 0.0, 0.0, 0.0, 0.0])
CORNERS_IMAGE = (1280, 960)
#: The truth of :func:`one_axis_corners` per setup: eye-in-hand a camera on a SCARA's flange looking down at a
#: board on the table; eye-to-hand a camera on the floor looking up at a board under the flange.
ONE_AXIS_CORNERS_TRUTH = {
    "eye_in_hand": (se3.transform_from_rotation_translation(se3.so3_exp([0.04, -0.06, 0.4]), [0.03, -0.04, 0.08]),
                    se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, 0.3]), [0.45, 0.0, -0.40])),
    "eye_to_hand": (se3.transform_from_rotation_translation(se3.so3_exp([0.03, 0.05, 0.2]), [0.01, 0.02, 0.05]),
                    se3.transform_from_rotation_translation(np.eye(3), [0.45, 0.0, -0.45])),
}


def one_axis_corners(rng, setup: str, n: int, *, pixel_std: float = 0.3, robot_std=(2e-4, 2e-4)):
    """An observation set (:class:`kinhec.synth.observations.ObservationSet`) of ``n`` views of a 7 x 5 board
    (25 mm) from a SCARA (flange down, turning about the vertical, over an 8 cm square at 5-20 cm height), with the
    truth ``(X, Y)`` of :data:`ONE_AXIS_CORNERS_TRUTH`; pixel noise ``pixel_std`` [px] per axis, the reported
    flange poses off by a twist of ``robot_std`` (rad, m).  Returns ``(obs, X, Y)``."""
    from kinhec.models.intrinsics import project_points
    from kinhec.synth.observations import ObservationSet

    board = np.array([[0.025 * i, 0.025 * j, 0.0] for j in range(5) for i in range(7)])
    board -= board.mean(axis=0)
    X, Y = ONE_AXIS_CORNERS_TRUTH[setup]
    xy = np.array([0.45, 0.0]) + rng.uniform(-0.04, 0.04, (n, 2))
    z = rng.uniform(0.05, 0.2, n) if setup == "eye_in_hand" else rng.uniform(0.0, 0.15, n)
    th = rng.uniform(-1.5, 1.5, n)
    A = se3.transform_from_rotation_translation(se3.so3_exp(np.outer(th, [0.0, 0.0, 1.0])) @ _FLANGE_DOWN, np.c_[xy, z])
    C = se3.invert_transform(A @ X) @ Y if setup == "eye_in_hand" else se3.invert_transform(Y) @ A @ X
    P = np.einsum("nij,pj->npi", C[:, :3, :3], board) + C[:, None, :3, 3]
    uv = project_points(CORNERS_CAMERA, P) + rng.normal(0.0, pixel_std, P.shape[:2] + (2,))
    inside = (P[..., 2] > 0.1).all() and (uv > 0).all() and (uv < np.array(CORNERS_IMAGE)).all()
    assert inside, "a generated view leaves the image"
    Am = A @ se3.se3_exp(np.c_[rng.normal(0, robot_std[0], (n, 3)), rng.normal(0, robot_std[1], (n, 3))])
    obs = ObservationSet("cam0", CORNERS_IMAGE, setup, [board.copy() for _ in range(n)], list(uv), Am)
    return obs, X, Y
