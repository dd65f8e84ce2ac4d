"""``kinhec calibrate`` on machines that turn about one axis (SCARA, a 4-axis palletiser, an XY-theta gantry).

The components the motion leaves open are named from the fit's information; they are checked against an
independent rank analysis of the residual's Jacobian on the noise-free poses (central differences, SVD).  With
the open component stated (``--known``) at its true value the whole ``X`` and ``Y`` come back within their
standard deviations, and the 95 % intervals cover the truth 90-98 % of the time over seeded draws; without it
the run stops naming the components; ``--partial`` returns the rest and marks them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate import calibrate
from kinhec.calibrate import reduced_dof as rd
from kinhec.cli import main
from kinhec.geometry import se3
from kinhec.util.errors import InputError

from helpers.checks import one_line_exit_2
from helpers.recordings import ONE_AXIS_MACHINES, one_axis_recording, streams, write_matrices, write_tum

SETUPS = ("eye_in_hand", "eye_to_hand")
Z95 = 1.959963984540054


def _files(tmp_path, A, C, tag=""):
    return write_matrices(tmp_path / f"hand{tag}.txt", A), write_matrices(tmp_path / f"eye{tag}.txt", C)


def _run(*args):
    return CliRunner().invoke(main, ["calibrate", *map(str, args)])


def _numeric_null_space(A, C, X, Y, setup):
    """The null space of the residual's Jacobian at the truth, noise-free poses: ``A_i X - Y B_i`` (top 3x4 rows)
    as a function of calibrate's 12 parameters (rotation ``R exp(phi)``, translation ``t + d``), by central
    differences and an SVD of the column-scaled Jacobian.  Returns the basis (12, k) in radians and metres."""
    B = se3.invert_transform(C) if setup == "eye_in_hand" else C

    def f(p):
        Xp, Yp = se3.retract(X, p[:6]), se3.retract(Y, p[6:])
        return (A @ Xp - Yp @ B)[:, :3, :].reshape(-1)

    h = 1e-6
    J = np.stack([(f(h * e) - f(-h * e)) / (2 * h) for e in np.eye(12)], axis=1)
    d = np.linalg.norm(J, axis=0)
    _, s, Vt = np.linalg.svd(J / d, full_matrices=True)
    null = s < 1e-8 * s[0]
    return (Vt[null].T / d[:, None]), s


def _basis(res):
    dirs = res.observability["open_directions"]["directions"]
    return np.array([[d.get(c, 0.0) for c in rd.COMPONENTS] for d in dirs]).T


def _errors(res, X, Y):
    """Errors in calibrate's parameters (rotation vector of R_est^T R_true, t_true - t_est)."""
    return np.r_[se3.so3_log(res.X[:3, :3].T @ X[:3, :3]), X[:3, 3] - res.X[:3, 3],
                 se3.so3_log(res.Y[:3, :3].T @ Y[:3, :3]), Y[:3, 3] - res.Y[:3, 3]]


# --------------------------------------------------------------------------- #
# which components are open
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("machine", ONE_AXIS_MACHINES)
def test_named_components_are_the_null_space_of_the_residual(tmp_path, machine, setup):
    rng = np.random.default_rng(17)
    A, C, X, Y = one_axis_recording(rng, machine, setup, 20)
    res = calibrate(*_files(tmp_path, A, C), fmt="rwhe", setup=setup, partial=True)
    # the truth's noise-free poses: one open direction, the translations of X and Y along the axis together
    A0, C0, _, _ = one_axis_recording(np.random.default_rng(17), machine, setup, 20, noise=False)
    N, s = _numeric_null_space(A0, C0, X, Y, setup)
    assert N.shape[1] == 1 and s[-2] > 1e-4 * s[0]  # rank 11, well clear of the next singular value
    moved = [rd.COMPONENTS[i] for i in np.flatnonzero(np.abs(N[:, 0]) > 1e-6 * np.abs(N[:, 0]).max())]
    assert res.undetermined == moved == ["X.tz", "Y.tz"]
    # the same direction: the pipeline's basis lies in the numeric null space
    b = _basis(res)
    assert b.shape == (12, 1)
    u = N[:, 0] / np.linalg.norm(N[:, 0])
    assert np.linalg.norm(b[:, 0] - u * (u @ b[:, 0])) < 2e-3 * np.linalg.norm(b[:, 0])
    # flange pointing down (SCARA, palletiser): X.tz and Y.tz move oppositely, their sum is what the data fix
    down = machine != "gantry"
    assert res.observability["open_directions"]["relation"] == f"only X.tz {'+' if down else '-'} Y.tz is determined"
    # the level sits far from both the open direction and the determined ones
    od = res.observability["open_directions"]
    assert od["information_ratio"][0] < rd.NULL_LEVEL / 100 and od["determined_information_ratio_min"] > 10 * rd.NULL_LEVEL


def test_the_relative_form_leaves_the_translation_of_x_along_the_axis_open():
    """The theory in ``A X = X B`` form (motions between stations): with every rotation about one axis only ``X``'s
    translation along it (the flange frame's ``R_0^T e_z``) is open; ``Y`` drops out, so the absolute form's open
    direction is that one with ``Y`` moving along the base's axis."""
    A, C, X, Y = one_axis_recording(np.random.default_rng(9), "palletiser", "eye_in_hand", 12, noise=False)
    B = se3.invert_transform(C)
    i, j = np.triu_indices(len(A), k=1)
    Am, Bm = se3.invert_transform(A[i]) @ A[j], se3.invert_transform(B[i]) @ B[j]

    def f(p):
        Xp = se3.retract(X, p)
        return (Am @ Xp - Xp @ Bm)[:, :3, :].reshape(-1)

    J = np.stack([(f(1e-6 * e) - f(-1e-6 * e)) / 2e-6 for e in np.eye(6)], axis=1)
    d = np.linalg.norm(J, axis=0)
    # flange down (a = -e_z): X.tz enters no motion's residual at all, and the other five are determined
    assert d[5] < 1e-9 * d.max()
    s = np.linalg.svd(J[:, :5] / d[:5], compute_uv=False)
    assert s[-1] > 1e-3 * s[0]


def test_a_tilted_flange_names_the_combination(tmp_path):
    """The turning axis is not a flange axis: X's translation along it (three components) with Y.tz."""
    R0 = se3.so3_exp([0.6, -0.5, 0.2])
    rng = np.random.default_rng(3)
    A, C, X, Y = one_axis_recording(rng, "scara", "eye_in_hand", 20, flange=R0)
    res = calibrate(*_files(tmp_path, A, C), fmt="rwhe", setup="eye_in_hand", partial=True)
    A0, C0, _, _ = one_axis_recording(np.random.default_rng(3), "scara", "eye_in_hand", 20, noise=False, flange=R0)
    N, _ = _numeric_null_space(A0, C0, X, Y, "eye_in_hand")
    u = N[:, 0] / np.linalg.norm(N[:, 0])
    # theory: X.t moves along the axis in the flange frame (R0^T e_z), Y.t along the base's z, by the same length
    a = R0.T @ [0.0, 0.0, 1.0]
    expect = np.r_[np.zeros(3), a, np.zeros(3), [0.0, 0.0, 1.0]]
    assert abs(abs(u @ expect) / np.linalg.norm(expect) - 1.0) < 1e-9
    assert res.undetermined == ["X.tx", "X.ty", "X.tz", "Y.tz"]
    b = _basis(res)[:, 0]
    assert np.allclose(b / np.linalg.norm(b), np.sign(b @ expect) * expect / np.linalg.norm(expect), atol=3e-3)
    # any one of the four fixes it: X.ty stated, the rest measured
    r2 = calibrate(*_files(tmp_path, A, C), fmt="rwhe", setup="eye_in_hand", known={"X.ty": X[1, 3]},
                   intrinsics_std="0,0")
    z = _errors(r2, X, Y) / np.where(np.r_[r2.X_std, r2.Y_std] > 0, np.r_[r2.X_std, r2.Y_std], np.inf)
    assert r2.determined and np.abs(z).max() < 4.0


def test_a_motion_about_two_axes_names_nothing(tmp_path):
    rng = np.random.default_rng(5)
    t, A, C = streams(rng)
    hand, eye = write_tum(tmp_path / "h.tum", t, A), write_tum(tmp_path / "e.tum", t, C)
    res = calibrate(hand, eye, setup="eye_in_hand", offset="none")
    assert res.determined and res.undetermined == [] and "open_directions" not in res.observability
    part = calibrate(hand, eye, setup="eye_in_hand", offset="none", partial=True)  # nothing open: the same run
    assert np.array_equal(part.X, res.X) and np.array_equal(part.X_std, res.X_std) and part.undetermined == []
    # a stated component would overrule the data: refused, naming its measured value
    with pytest.raises(InputError, match="the motion determines every component of X and Y"):
        calibrate(hand, eye, setup="eye_in_hand", offset="none", known=["X.tz=0.09"])


def test_a_rotary_table_leaves_two_directions_open(tmp_path):
    """Turning about one fixed line without moving sideways: the rotation about the axis is open too."""
    rng = np.random.default_rng(0)
    n = 15
    A = se3.transform_from_rotation_translation(
        se3.so3_exp(np.outer(rng.uniform(-1.5, 1.5, n), [0.0, 0.0, 1.0])) @ np.diag([1.0, -1.0, -1.0]),
        np.tile([0.4, 0.1, 0.3], (n, 1)))
    X, Y = one_axis_recording(rng, "scara", "eye_in_hand", 2)[2:]
    C0 = se3.invert_transform(A @ X) @ Y
    N, _ = _numeric_null_space(A, C0, X, Y, "eye_in_hand")
    C = C0 @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 5e-4, (n, 3))])
    A = A @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (n, 3)), rng.normal(0, 2e-4, (n, 3))])
    hand, eye = _files(tmp_path, A, C)
    res = calibrate(hand, eye, fmt="rwhe", setup="eye_in_hand", partial=True)
    b = _basis(res)
    assert N.shape[1] == b.shape[1] == 2
    # the pipeline's span (from noisy poses) is the numeric null space: principal angles within 8 deg (radians and
    # metres side by side), its components among those the span moves
    Q = np.linalg.qr(N / np.abs(N).max(axis=0))[0]
    Qb = np.linalg.qr(b)[0]
    assert np.linalg.svd(Q.T @ Qb, compute_uv=False).min() > np.cos(np.radians(8.0))
    reach = np.linalg.norm(Q, axis=1)
    assert set(res.undetermined) >= {"X.tz", "Y.tz", "X.rz", "Y.rz"}
    assert set(res.undetermined) <= {rd.COMPONENTS[i] for i in np.flatnonzero(reach > 1e-6)}
    with pytest.raises(InputError, match="state 2 components"):
        calibrate(hand, eye, fmt="rwhe", setup="eye_in_hand", known={"X.tz": X[2, 3]})


# --------------------------------------------------------------------------- #
# refused without --known, --known, --partial
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("setup", SETUPS)
def test_refused_naming_the_open_components(tmp_path, setup):
    A, C, _, _ = one_axis_recording(np.random.default_rng(2), "scara", setup, 15)
    hand, eye = _files(tmp_path, A, C)
    r = _run("--hand", hand, "--eye", eye, "--format", "rwhe", "--setup", setup)
    what = "camera's" if setup == "eye_in_hand" else "marker's"
    one_line_exit_2(r, "X.tz, Y.tz are not determined", "only X.tz + Y.tz is determined",
                    f"--known X.tz=METRES (the {what} origin along the flange's z axis)", "--known Y.tz=METRES",
                    "--partial")


@pytest.mark.parametrize("setup", SETUPS)
def test_known_true_value_coverage(tmp_path, setup):
    """X.tz stated at its truth: every other component within 4 sigma, and the 95 % intervals cover the truth
    90-98 % of the time (60 draws of 12 stations, the 11 measured components pooled; 200 draws of
    benchmarks/one_axis_coverage.py gave 95.6 % eye-in-hand and 94.9 % eye-to-hand)."""
    hits, zmax = [], []
    for seed in range(60):
        A, C, X, Y = one_axis_recording(np.random.default_rng(1000 + seed), "scara", setup, 12)
        res = calibrate(*_files(tmp_path, A, C), fmt="rwhe", setup=setup, known={"X.tz": X[2, 3]},
                        intrinsics_std="0,0")  # the recording has no intrinsics error: none counted
        assert res.determined, res.warnings
        assert res.X[2, 3] == X[2, 3] and res.X_std[5] == 0.0  # stated: exactly, standard deviation 0
        s = np.r_[res.X_std, res.Y_std]
        keep = np.arange(12) != 5
        z = _errors(res, X, Y)[keep] / s[keep]
        hits.append(np.abs(z) < Z95)
        zmax.append(np.abs(z).max())
    cover = float(np.mean(hits))
    assert 0.90 <= cover <= 0.98, cover
    assert max(zmax) < 5.0


def test_partial_marks_the_open_components(tmp_path):
    A, C, X, Y = one_axis_recording(np.random.default_rng(8), "palletiser", "eye_to_hand", 20)
    hand, eye = _files(tmp_path, A, C)
    out = tmp_path / "p.json"
    r = _run("--hand", hand, "--eye", eye, "--format", "rwhe", "--setup", "eye_to_hand", "--partial", "--json", out)
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["undetermined"] == ["X.tz", "Y.tz"]
    assert d["X_std"][5] is None and d["Y_std"][5] is None and d["sigma"]["X"]["trans_mm"][2] is None
    assert d["X_t_m"][2] == pytest.approx(0.0, abs=1e-12)  # the convention: X.tz = 0
    assert d["observability"]["open_directions"]["convention"] == {"X.tz": 0.0}
    assert "undetermined (values by convention, no std): X.tz, Y.tz" in r.output
    assert "their values here are a convention, not a measurement" in d["verdict"]
    assert d["point_error"] is None  # a point's position in the base depends on them
    # the determined components have the standard deviations of the run that states X.tz (gauge-invariant), and
    # the combination the data fix (X.tz + Y.tz, flange down) is the truth's within its deviation
    k = calibrate(hand, eye, fmt="rwhe", setup="eye_to_hand", known={"X.tz": X[2, 3]})
    measured = [i for i in range(12) if i not in (5, 11)]
    s_partial = np.r_[np.array(d["X_std"], dtype=float), np.array(d["Y_std"], dtype=float)][measured]
    assert np.allclose(s_partial, np.r_[k.X_std, k.Y_std][measured], rtol=0.02)
    total = d["X_t_m"][2] + d["Y_t_m"][2]
    assert abs(total - (X[2, 3] + Y[2, 3])) < 4 * k.Y_std[5]


def test_known_refusals(tmp_path):
    A, C, X, _ = one_axis_recording(np.random.default_rng(4), "gantry", "eye_in_hand", 15)
    hand, eye = _files(tmp_path, A, C)
    base = ("--hand", hand, "--eye", eye, "--format", "rwhe", "--setup", "eye_in_hand")
    one_line_exit_2(_run(*base, "--known", "X.tx=0.03"), "known X.tx: determined by the motion",
                    "the open components are X.tz, Y.tz")
    one_line_exit_2(_run(*base, "--known", "X.tz=0.08", "--known", "Y.tz=-0.3"),
                    "2 stated where the motion leaves 1 direction open")
    one_line_exit_2(_run(*base, "--known", "X.rz=0.1"), "only translations")
    one_line_exit_2(_run(*base, "--known", "X.tz=0.08", "--partial"), "got both")
    ok = _run(*base, "--known", "X.tz=0.08")
    assert ok.exit_code == 0, ok.output
    assert "X.tz = 0.08 m (the camera's origin along the flange's z axis) as stated" in ok.output


@pytest.mark.parametrize("item, message", [
    ("X.tz", "expected COMPONENT=VALUE"), ("Z.tz=1", "expected a component of"),
    ("X.tz=abc", "expected a number of metres"), ("X.tz=nan", "finite"), ("Y.ry=0", "only translations"),
])  # fmt: skip
def test_parse_known_errors(item, message):
    with pytest.raises(InputError, match=message):
        rd.parse_known([item])


def test_parse_known_values():
    assert rd.parse_known(["X.tz=0.120", "Y.tx = -1e-3"]) == {5: 0.12, 9: -0.001}
    assert rd.parse_known(None) == {}


def test_check_reads_a_stated_calibration_and_refuses_a_partial_one(tmp_path):
    """``kinhec check --update`` keeps a stated component where it was stated (its standard deviation 0: a prior
    that holds it); a ``--partial`` calibration is no reference for new pairs (some of its values are a
    convention)."""
    A, C, X, Y = one_axis_recording(np.random.default_rng(21), "scara", "eye_in_hand", 20)
    hand, eye = _files(tmp_path, A, C)
    # new pairs from a motion about every axis, same truth
    rng = np.random.default_rng(22)
    A2 = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.4, (20, 3))) @ np.diag([1.0, -1.0, -1.0]),
                                                 rng.normal([0.4, 0.0, 0.2], 0.1, (20, 3)))
    C2 = (se3.invert_transform(A2 @ X) @ Y) @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (20, 3)), rng.normal(0, 5e-4, (20, 3))])
    hand2, eye2 = _files(tmp_path, A2, C2, "2")
    base = ("--hand", hand, "--eye", eye, "--format", "rwhe", "--setup", "eye_in_hand")
    known, partial, updated = tmp_path / "known.json", tmp_path / "partial.json", tmp_path / "updated.json"
    assert _run(*base, "--known", f"X.tz={float(X[2, 3])!r}", "--json", known).exit_code == 0
    assert _run(*base, "--partial", "--json", partial).exit_code == 0
    check = ("--hand", hand2, "--eye", eye2, "--format", "rwhe")
    r = CliRunner().invoke(main, ["check", str(known), *map(str, check), "--update", str(updated)])
    assert r.exit_code == 0, r.output
    d = json.loads(updated.read_text())
    assert d["X_t_m"][2] == pytest.approx(X[2, 3], abs=1e-9) and d["X_std"][5] < 1e-6
    # (Y.tz is not checked: the JSON keeps no cross-covariance, and a one-axis calibration's X and Y correlate
    # strongly, so that check's prior over-trusts some combinations -- a limit of check's update, see check.md)
    one_line_exit_2(CliRunner().invoke(main, ["check", str(partial), *map(str, check)]),
                    "expected a complete calibration", "X.tz, Y.tz")


def test_xy_information_is_the_inverse_of_the_covariance_block():
    """The information on (X, Y) with the nuisance parameters marginalised is the inverse of the (X, Y) block of the
    full covariance (a Schur complement), with and without a prior; with no nuisance parameter it is G^T G."""
    from kinhec.calibrate import reduced_dof as rd

    rng = np.random.default_rng(5)
    for P, prior in ((14, None), (14, np.diag(rng.uniform(0.1, 1.0, 14))), (12, None)):
        G = rng.normal(size=(30, 6, P))
        H = G.reshape(-1, P).T @ G.reshape(-1, P) + (0 if prior is None else prior)
        want = np.linalg.inv(np.linalg.inv(H)[:12, :12])
        np.testing.assert_allclose(rd.xy_information(G, prior), want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


# --------------------------------------------------------------------------- #
# recordings of the machine generator, as a user has them (kinhec export)
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def machine_recordings(tmp_path_factory):
    """Two recordings per machine and set-up of ``kinhec generate-machines`` (SCARA and gantry), exported as TUM
    files: a 20 s joint sinusoid and 20 joint waypoints, camera poses ``se3_gaussian``."""
    from kinhec import io
    from kinhec.dataset.export import export_sequence
    from kinhec.synth.machines import generate_machine_dataset

    root = tmp_path_factory.mktemp("machines") / "data"
    # (seed 4: since the static camera is placed as published, 0.8-1.6 m from the marker, seed 3's eye-to-hand
    # waypoint recording has 18 pairs seen from afar, where the fit that also estimates the offset and the board's
    # scale reaches 1.3-3.7 times the bound that knows them)
    generate_machine_dataset(root, ("scara_ls6", "gantry_xyzr"), 2, seed=4)
    out = []
    for sid in io.rebuild_index(root)["sequence_id"]:
        files = export_sequence(root, sid, "tum", root.parent / "files")
        hand = next(p for p in files if p.name.endswith("_base_ee_meas.tum"))
        eye = next(p for p in files if p.name.endswith("_meas.tum") and p != hand)
        out.append((io.load_sequence(root, sid), hand, eye))
    return out


@pytest.mark.filterwarnings("ignore")
def test_generated_machines_name_what_the_bound_leaves_open_and_fit_to_it_when_stated(machine_recordings):
    """Each generated SCARA and gantry recording, both set-ups: the bound (the Fisher information of the noise-free
    recording, :func:`kinhec.evaluate.bounds.sequence_information`) leaves one direction open, the analytic one
    (``X``'s origin along the turning axis as the flange sees it and ``Y``'s along the base's vertical, together);
    calibrate names exactly its components and does not answer; with ``X.tz`` stated at its truth every other
    component lies within 4 sigma, and calibrate's sigma of ``X`` is that of the bound with ``X.tz`` fixed (a
    fit that also estimates the clock offset and the board's scale: within 0.8-2.0 of it)."""
    from kinhec.evaluate import bounds

    for seq, hand, eye in machine_recordings:
        X, Y, setup = seq.X, seq.Y, seq.configuration
        F = bounds.parent_frame_information(bounds.sequence_information(seq), X, Y)
        null = bounds.null_directions(F)
        assert null.shape[0] == 1, seq.sequence_id
        v = null[0] / null[0][5]
        # the analytic direction: the turning axis in the flange frame, a = R_A^T e_z for every hand pose
        a = seq.camera.T_base_ee_gt[0, :3, :3].T @ [0.0, 0.0, 1.0]
        assert np.allclose(a, [0.0, 0.0, np.sign(a[2])], atol=1e-9)  # the flange points along the axis
        assert np.allclose(v, np.r_[np.zeros(5), 1.0, np.zeros(5), a[2]], atol=1e-6), (seq.sequence_id, v)
        res = calibrate(hand, eye, setup=setup, intrinsics_std="0,0")
        assert not res.determined and res.observability["undetermined"] == ["X.tz", "Y.tz"], (
            seq.sequence_id, res.observability["undetermined"])
        res = calibrate(hand, eye, setup=setup, intrinsics_std="0,0", known={"X.tz": X[2, 3]})
        assert res.determined, (seq.sequence_id, res.warnings)
        s = np.r_[res.X_std, res.Y_std]
        keep = np.arange(12) != 5
        z = _errors(res, X, Y)[keep] / s[keep]
        assert np.abs(z).max() < 4.0, (seq.sequence_id, z)
        cov, _ = bounds.constrained_covariance(F, [5])
        ratio = res.X_std[[0, 1, 2, 3, 4]] / np.sqrt(np.diag(cov))[[0, 1, 2, 3, 4]]
        assert np.all((ratio > 0.8) & (ratio < 2.0)), (seq.sequence_id, ratio)



def test_stations_too_far_apart_for_the_coarse_offset_search_leave_it_to_the_refinement(tmp_path):
    """A SCARA's 20 joint waypoints 1.4 s apart, the files holding the stations only and stamped alike: over +-0.5 s
    the coarse search has the lags -350, 0 and +350 ms, and its peak on -350 ms locates nothing. The run used to stop
    as "the clock offset is not determined ... the edge of the searched +-0.5 s"; the refinement finds the offset
    (the generator's 0), the motion's open components are named, and with ``X.tz`` stated ``X`` is within its σ."""
    from kinhec import io
    from kinhec.calibrate import pairing as pr
    from kinhec.calibrate.readers import read_stream
    from kinhec.dataset.export import export_sequence
    from kinhec.solvers import estimate_time_offset
    from kinhec.synth.generator import generate_sequence
    from kinhec.synth.machines import machine_recipes
    from kinhec.synth.recipe import Recipe

    recipe = machine_recipes("scara_ls6", 50, seed=0)[59]  # the full run's motion-000059, eye-to-hand
    assert recipe["sampling_mode"] == "stations"
    root = tmp_path / "data"
    io.write_shard(root, "motion", 0, [generate_sequence(Recipe.from_dict(recipe))])
    io.write_index(root, io.rebuild_index(root))
    seq = io.load_sequence(root, recipe["sequence_id"])
    files = export_sequence(root, recipe["sequence_id"], "tum", tmp_path / "files")
    hand = next(p for p in files if p.name.endswith("_base_ee_meas.tum"))
    eye = next(p for p in files if p.name.endswith("_meas.tum") and p != hand)
    est = estimate_time_offset(seq.robot.t, seq.robot.T_base_ee_meas, seq.camera.t, seq.camera.T_cam_target_meas)
    assert est.lags_s.size == 3 and est.at_boundary  # the case: three lags, the peak on one end
    h, e = read_stream(str(hand)), read_stream(str(eye))
    assert not pr.coarse_offset(h, h.T, e, e.T, "auto", 0.5).at_edge
    res = calibrate(str(hand), str(eye), setup="eye_to_hand", intrinsics_std="0,0")
    assert not res.determined and res.observability["undetermined"] == ["X.tz", "Y.tz"]
    assert abs(res.time_offset_s) < 0.005
    X = seq.X
    known = calibrate(str(hand), str(eye), setup="eye_to_hand", intrinsics_std="0,0", known={"X.tz": float(X[2, 3])})
    assert known.determined and known.X_std[5] == 0.0
    keep = np.arange(12) != 5
    z = _errors(known, X, seq.Y)[keep] / np.r_[known.X_std, known.Y_std][keep]
    assert np.abs(z).max() < 4.0, z
