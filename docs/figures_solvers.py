"""The run-derived figures of ``docs/solvers.md``: the pixel solver on the small tier, the agreement with OpenCV.

* ``solvers.pixel``: medians of ``X``'s error on the small tier's pnp track, from the stored results of
  ``docs/leaderboard_small`` (``docs/leaderboard_small.results.parquet``, which
  ``tests/test_leaderboard_page.py`` holds to a fresh benchmark);
* ``solvers.opencv``: every hand-eye method of kinhec against OpenCV's (``cv2``, dev extra) on 60 noisy
  synthetic chains (the chains of ``tests/helpers/chains.py``, 20 poses on a small arm's workspace,
  robot noise 0.5 mrad / 0.3 mm, camera noise 2 mrad / 1, 1, 3 mm; 30 per configuration), recomputed.

Written by ``python docs/build_figures.py``; checked by ``tests/test_doc_figures.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "leaderboard_small.results.parquet"

#: Chains per configuration, poses per chain, and their noise (robot rot/trans; camera rot, x, y, z).
N_CHAINS, N_POSES = 30, 20
C2 = dict(robot_noise=(0.0005, 0.0003), camera_noise=(0.002, 0.001, 0.001, 0.003))
HAND_EYE = ("tsai_lenz", "park_martin", "horaud_dornaika", "andreff", "daniilidis")
ROBOT_WORLD = ("shah", "li_kronecker")
_CV = {"tsai_lenz": "TSAI", "park_martin": "PARK", "horaud_dornaika": "HORAUD", "andreff": "ANDREFF",
       "daniilidis": "DANIILIDIS", "shah": "SHAH", "li_kronecker": "LI"}  # fmt: skip


# --------------------------------------------------------------------------- #
# the pixel solver on the small tier's pnp track
# --------------------------------------------------------------------------- #
#: The page's blocks, in page order; those whose figures depend on the OpenCV version installed.
NAMES = ('solvers.pixel', 'solvers.opencv')
OPENCV_BLOCKS = ('solvers.opencv',)


def pixel_facts(results_path: Path = RESULTS) -> dict:
    import pandas as pd

    from kinhec.solvers import BASELINES

    res = pd.read_parquet(results_path)
    pnp = res[(res.track == "pnp") & (res.eval_sync == "oracle") & res.ok]
    med = pnp.groupby("solver")[["X_rot_err_deg", "X_trans_err_mm"]].median()
    classical = [s for s in BASELINES if s != "he_ml" and s in med.index]
    best = min(classical, key=lambda s: med.loc[s, "X_trans_err_mm"])
    best_rot = min(classical, key=lambda s: med.loc[s, "X_rot_err_deg"])
    return {"n": int(pnp.sequence_id.nunique()), "keyframes": int(pnp.loc[pnp.solver == "reprojection", "n_motions"].median()),
            "med": med, "best": best, "best_rot": best_rot}  # fmt: skip


def render_pixel(f: dict) -> str:
    m = f["med"]
    cell = lambda s: f"{m.loc[s, 'X_rot_err_deg']:.3f} deg / {m.loc[s, 'X_trans_err_mm']:.3f} mm"  # noqa: E731
    rot, tr = m.loc["reprojection", "X_rot_err_deg"], m.loc["reprojection", "X_trans_err_mm"]
    b, br = f["best"], f["best_rot"]
    if tr < m.loc[b, "X_trans_err_mm"]:
        trans = f"The pixels beat every closed form and refinement on the PnP poses in translation ({tr / m.loc[b, 'X_trans_err_mm']:.2f} times `{b}`'s error)"
    else:
        trans = f"The pixels do not beat `{b}` on the PnP poses in translation"
    if rot < m.loc[br, "X_rot_err_deg"]:
        rota = "and in rotation."
    else:
        rota = (f"but not in rotation, where `{br}` has the smallest median of the classical solvers "
                f"({m.loc[br, 'X_rot_err_deg']:.3f} deg).")  # fmt: skip
    order = "beats" if m.loc["he_ml", "X_trans_err_mm"] < tr else "does not beat"
    return (
        f"On the small tier's pnp track ({f['n']} sequences, {f['keyframes']} keyframes each; "
        f"`docs/leaderboard_small.md`) the medians of X are {cell('reprojection')} for `reprojection` against "
        f"{cell(b)} for `{b}`, the best classical solver in translation, and {cell('he_ml')} for `he_ml`, which the "
        f"benchmark gives the same pixels (section 8.3, \"Pixels\"). {trans}, {rota} `he_ml` on the pixels {order} "
        "`reprojection`: the benchmark's pixel solver takes the measured robot poses as exact, while `he_ml` treats "
        "their errors as noise and marginalises them.\n"
    )


# --------------------------------------------------------------------------- #
# kinhec against OpenCV on noisy chains
# --------------------------------------------------------------------------- #
def _chains():
    """The 60 chains: seeds 0..29 per configuration; a chain with a pair motion above 168 deg is redrawn."""
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from helpers.chains import CONFIGURATIONS, make_chain
    finally:
        sys.path.remove(str(REPO / "tests"))
    from kinhec.geometry import se3

    out = []
    for configuration in CONFIGURATIONS:
        for seed in range(N_CHAINS):
            rng = np.random.default_rng(seed)
            while True:  # near 180 deg the quaternion sign of a motion is ambiguous: compare like with like
                ch = make_chain(rng, N_POSES, configuration=configuration, workspace="small_arm", **C2)
                A, _ = _all_pairs(ch.A_abs, ch.B_abs)
                if np.degrees(se3.rotation_angle(A[:, :3, :3])).max() < 168.0:
                    break
            out.append(ch)
    return out


def _all_pairs(A_abs, B_abs):
    from kinhec.geometry import se3

    i, j = np.triu_indices(A_abs.shape[0], 1)
    return se3.invert_transform(A_abs[j]) @ A_abs[i], se3.invert_transform(B_abs[j]) @ B_abs[i]


def opencv_facts() -> dict:
    """Per method: deviations from OpenCV and errors to the truth over the chains (deg, mm per chain)."""
    import cv2

    from kinhec import solvers
    from kinhec.geometry import se3

    err = lambda T, U: np.array(se3.pose_error(T, U))  # noqa: E731
    rows = {name: {"same": [], "same_truth": [], "protocol": [], "cv": [], "kinhec": []} for name in HAND_EYE + ROBOT_WORLD}
    for ch in _chains():
        Ap, Bp = _all_pairs(ch.A_abs, ch.B_abs)
        A, B = ch.motions()
        Hc = se3.invert_transform(ch.B_abs)
        for name in HAND_EYE:
            R, t = cv2.calibrateHandEye([a[:3, :3] for a in ch.A_abs], [a[:3, 3:4] for a in ch.A_abs],
                                        [h[:3, :3] for h in Hc], [h[:3, 3:4] for h in Hc],
                                        method=getattr(cv2, f"CALIB_HAND_EYE_{_CV[name]}"))  # fmt: skip
            X_cv = se3.transform_from_rotation_translation(R, t[:, 0])
            f = getattr(solvers, name)
            X = f(A, B)
            Xp = f(Ap, Bp)
            r = rows[name]
            r["same"].append(err(Xp, X_cv))
            r["same_truth"].append(err(Xp, ch.X))
            r["protocol"].append(err(X, X_cv))
            r["cv"].append(err(X_cv, ch.X))
            r["kinhec"].append(err(X, ch.X))
        Ai, Bi = se3.invert_transform(ch.A_abs), se3.invert_transform(ch.B_abs)
        for name in ROBOT_WORLD:
            R_bw, t_bw, R_gc, t_gc = cv2.calibrateRobotWorldHandEye(
                [b[:3, :3] for b in Bi], [b[:3, 3:4] for b in Bi], [a[:3, :3] for a in Ai], [a[:3, 3:4] for a in Ai],
                method=getattr(cv2, f"CALIB_ROBOT_WORLD_HAND_EYE_{_CV[name]}"))  # fmt: skip
            X_cv = se3.invert_transform(se3.transform_from_rotation_translation(R_gc, t_gc[:, 0]))
            f = getattr(solvers, name)
            _, Yp = f(Bi, Ai)  # the equation OpenCV solves, inv(B_i) inv(Y) = inv(X) inv(A_i): inv(Yp) is its X
            X, _ = f(ch.A_abs, ch.B_abs)
            r = rows[name]
            r["same"].append(err(se3.invert_transform(Yp), X_cv))
            r["same_truth"].append(err(se3.invert_transform(Yp), ch.X))
            r["protocol"].append(err(X, X_cv))
            r["cv"].append(err(X_cv, ch.X))
            r["kinhec"].append(err(X, ch.X))
    return {"rows": {k: {c: np.array(v) for c, v in r.items()} for k, r in rows.items()}, "version": cv2.__version__,
            "n": 2 * N_CHAINS}  # fmt: skip


#: Below this a deviation is round-off, which differs from machine to machine: it is shown as a bound.
ROUNDOFF = 1e-9


def _g(v: float) -> str:
    return f"< {ROUNDOFF:g}" if v < ROUNDOFF else f"{v:.2g}"


def _dm(a: np.ndarray) -> str:
    """``"0.0046 deg / 0.28 mm"`` of a (deg, mm) pair, two significant digits; round-off as ``< 1e-09``."""
    return f"{_g(a[0])} deg / {_g(a[1])} mm"


def render_opencv(f: dict) -> str:
    rows = f["rows"]
    version = ".".join(f["version"].split(".")[:3])
    head = [
        f"Noisy, the deviations measured ({f['n']} chains of {N_POSES} pose pairs, half of them eye-in-hand, robot "
        f"noise 0.5 mrad / 0.3 mm, camera noise 2 mrad / 1-3 mm, small-arm workspace, OpenCV {version}; medians over "
        "the chains, the largest in brackets; deg / mm):",
        "",
        "| method | kinhec on OpenCV's motions | kinhec (consecutive motions) vs OpenCV (all pairs) | error OpenCV | error kinhec |",
        "|---|---|---|---|---|",
    ]
    note = {"tsai_lenz": " (1)", "andreff": " (2)", "shah": " (3)", "li_kronecker": " (3)"}
    for name in HAND_EYE + ROBOT_WORLD:
        r = rows[name]
        same = np.median(r["same"], axis=0)
        mx = r["same"].max(axis=0)
        same_txt = f"{_dm(same)} ({_dm(mx)})"
        if name in ROBOT_WORLD:
            same_txt = f"{_dm(mx)} on the inverted equation"
        head.append(f"| {_CV[name]} / `{name}`{note.get(name, '')} | {same_txt} | {_dm(np.median(r['protocol'], axis=0))} "
                    f"({_dm(r['protocol'].max(axis=0))}) | {_dm(np.median(r['cv'], axis=0))} | "
                    f"{_dm(np.median(r['kinhec'], axis=0))} |")  # fmt: skip
    a = rows["andreff"]
    k, c = a["same_truth"], a["cv"]
    closer = (k < c).mean(axis=0)
    h = len(c) // 2
    mean = lambda v: f"{v.mean(axis=0)[0]:.4f} deg / {v.mean(axis=0)[1]:.3f} mm"  # noqa: E731
    head += [
        "",
        "(2) **ANDREFF.** OpenCV solves Andreff's 12-unknown linear system (rotation and translation rows "
        "together); kinhec takes the rotation from the rotation rows alone and then solves the translation with "
        "that rotation (section 3.5), as the published toolkit does. On the same motions the two rotations "
        f"therefore differ by about the noise, a median {np.median(a['same'][:, 0]):.2g} deg (largest "
        f"{a['same'][:, 0].max():.2g} deg), not by round-off, and the translations by a median "
        f"{np.median(a['same'][:, 1]):.2g} mm. Against the truth, on the same (all-pair) motions: mean errors "
        f"eye-in-hand {mean(k[:h])} for kinhec, {mean(c[:h])} for OpenCV; eye-to-hand {mean(k[h:])} and {mean(c[h:])}; "
        f"kinhec is the closer of the two in rotation on {100 * closer[0]:.0f} % of the chains and in translation on "
        f"{100 * closer[1]:.0f} %.",
    ]
    return "\n".join(head) + "\n"


def blocks(results_path: Path = RESULTS) -> dict[str, str]:
    """Every block of the page, recomputed."""
    return {"solvers.pixel": render_pixel(pixel_facts(results_path)), "solvers.opencv": render_opencv(opencv_facts())}
