"""Each edge of :func:`kinhec.calibrate.calibrate_multi` checked on its own and against the graph.

One edge's files read the wrong way round (a camera's poses written ``T_tag_cam``, a robot's ``T_ee_base``)
does not stop the joint fit: it pulls the unknowns the edge touches, the robust gate may then reject a *good*
edge beside it, and every unknown still comes out "determined".  So before the fit, every edge ``e = (i, j)``
(pairs ``A_k X_i = Y_j B_k`` as read) is read four ways: as read, its hand poses inverted, its eye poses
inverted, both inverted (a *reading*, ``(hand inverted, eye inverted)``), and each reading is scored in log
units (natural log) by two kinds of evidence:

* **its own fit**, as the single-camera firewall scores a direction class
  (:func:`kinhec.calibrate.readings.fit_class`, :func:`kinhec.calibrate.readings.fit_score`): the edge's
  pairs as read (class 0: as read, or both inverted) and with one stream inverted (class 1).  It needs two
  motions (three pairs) and says nothing within a class;
* **the graph**: the ``X_i`` and ``Y_j`` the other edges give (each the medoid of the own fits of the other
  edges that touch it and whose own fit keeps their reading).  With both, every pair of the edge is
  predicted; with one, the other follows from each pair and the pairs must agree.  This separates the
  readings of one class (the eye or the hand inverted give different ``X`` and ``Y``) and works from one pair
  (both known) or two (one known).

A score is ``-n [ln(rot / rot_best) + ln(trans / trans_best)]`` for the median residuals of the edge's ``n``
pairs (``n - 1`` when an unknown is fitted from them), ratios within
:data:`~kinhec.calibrate.readings.FIT_TOLERANCE` counting as equal, as in
:func:`~kinhec.calibrate.readings.fit_score`.  A reading that beats the one as read by
:data:`~kinhec.calibrate.conventions.DECISIVE` (a factor of 100) contradicts it.  The check never picks a
reading: what the edge is read as comes from the user's statement (``--edge-pose``, ``--hand-pose``,
``--eye-pose``), the file's own claim (its format, a comment line such as ``# T_target_cam``) or the default,
and a contradicted edge stops the run naming the file, the reading that fits, what each reading gives and how
to state it (:func:`refusal`; ``force``: a warning, the edge kept as read).  Where several readings fit
equally (an edge whose unknowns no other edge determines) they are all named.

The default is no statement: an edge that fits as read, but equally well with a file inverted whose
direction only the default gave (one pair of a camera that sees one tag; a graph of one edge), stops the run
too, naming what each reading gives, until an option or a comment line states it.  Pose arrays handed to
:func:`~kinhec.calibrate.calibrate_multi` directly are the caller's statement.  The check is two passes: the
second leaves out of the references the edges the first found contradicted (a both-inverted edge fits its
own class and is caught by the graph only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import conventions as cv
from kinhec.calibrate import readings as rd
from kinhec.util.errors import InputError
from kinhec.solvers import _common as c

__all__ = ["READINGS", "EdgeFiles", "EdgeCheck", "check_edges", "refusal", "EdgeReadingError", "MIN_OWN_PAIRS",
           "OWN_SUBSAMPLE", "stated_direction", "arrays_files"]

#: The readings of an edge: (hand poses inverted, eye poses inverted); the first is as read.
READINGS = ((False, False), (False, True), (True, False), (True, True))
#: Fewest pairs for an edge's own class fit (two motions).
MIN_OWN_PAIRS = 3
#: Pairs (evenly spread) of an edge's own class fit: its cost grows with their square, and a dozen separate the
#: classes by far more than the decisive margin (the graph check uses every pair).
OWN_SUBSAMPLE = 12
#: Largest reading count named in a refusal.
_SHOWN = 3

_FLIP = {"base_T_ee": "ee_T_base", "ee_T_base": "base_T_ee", "cam_T_target": "target_T_cam",
         "target_T_cam": "cam_T_target"}  # fmt: skip
_COMMENT = {"base_T_ee": "# T_base_ee", "ee_T_base": "# T_ee_base", "cam_T_target": "# T_cam_target",
            "target_T_cam": "# T_target_cam"}  # fmt: skip


class EdgeReadingError(InputError):
    """An edge's files fit only another reading than the one stated (or the default)."""


@dataclass(frozen=True)
class EdgeFiles:
    """How one edge was read: its files and the direction of each with where that came from.

    ``key`` is ``"x_id/y_id"``; ``hand``/``eye`` the files shown in messages; ``hand_pose``/``eye_pose`` the
    directions read (None for arrays given in the solver form); ``hand_source``/``eye_source`` what stated
    them (``"--eye-pose"``, ``"the eth format"``, ``"its comment 'T_cam_tag'"``, ``"the default"``).
    """

    key: str
    hand: str
    eye: str
    hand_pose: str | None = None
    eye_pose: str | None = None
    hand_source: str = "as given"
    eye_source: str = "as given"

    @property
    def files(self) -> bool:
        return self.hand_pose is not None


_CHOICES = {"hand": ("base_T_ee", "ee_T_base"), "eye": ("cam_T_target", "target_T_cam")}
_DEFAULT = {"hand": "base_T_ee", "eye": "cam_T_target"}


def stated_direction(stream, role: str, key: str, edge_pose: str | None, option: str | None) -> tuple[str | None, str]:
    """The direction a file of an edge is read as, and what states it.

    In this order: the edge's own option (``--edge-pose KEY/ROLE=DIR``), the option for every file
    (``--hand-pose``/``--eye-pose``), the file's format, the file's comment lines or name (a frame pair such as
    ``T_target_cam``, :func:`kinhec.calibrate.conventions.file_claims`), the default.  Returns ``(None, what)``
    when the format states it (the reader applies it).
    """
    if edge_pose is not None:
        if edge_pose not in _CHOICES[role]:
            raise InputError(f"--edge-pose {key}/{role}: expected one of {', '.join(_CHOICES[role])}, got {edge_pose!r}")
        return edge_pose, f"--edge-pose {key}/{role}"
    if option is not None:
        return option, f"--{role}-pose"
    if stream.direction is not None:
        return None, f"the {stream.fmt} format"
    claims = sorted((cl for cl in cv.file_claims(stream) if cl.attribute == "frames"), key=lambda cl: -cl.weight)
    for cl in claims:
        agree = [d for d in _CHOICES[role] if cv.frames_agree(cl.value, cv.frames_of(role, d))]
        if len(agree) == 1:
            return agree[0], cl.why
    return _DEFAULT[role], "the default"


def arrays_files(edge) -> EdgeFiles:
    """The :class:`EdgeFiles` of pose arrays handed to :func:`~kinhec.calibrate.calibrate_multi` directly."""
    return EdgeFiles(key=f"{edge[0]}/{edge[1]}", hand=f"pairs[{edge!r}] A", eye=f"pairs[{edge!r}] B")


@dataclass
class EdgeCheck:
    """The evidence about one edge's readings.

    Attributes
    ----------
    edge : (x_id, y_id)
    n : int
        Pairs.
    own, graph, total : dict of reading -> float
        Log scores (<= 0) of its own class fit, of the graph, and their sum.
    fit : dict of reading -> (rot_deg, trans_mm, source)
        Median residuals of the reading (``source`` ``"graph"`` or ``"own"``; None without evidence).
    gives : dict of reading -> (X, Y)
        The ``X_i`` and ``Y_j`` the reading implies (None where nothing determines them).
    refs : tuple of str
        Which of ``X``, ``Y`` the other edges determine.
    """

    edge: tuple
    n: int
    own: dict
    graph: dict
    total: dict
    fit: dict
    gives: dict
    refs: tuple
    consensus: dict = field(default_factory=dict)

    @property
    def best(self) -> tuple:
        return max(READINGS, key=lambda r: self.total[r])

    @property
    def margin(self) -> float:
        """How far the best reading beats the one as read (log units)."""
        return self.total[self.best] - self.total[READINGS[0]]

    @property
    def contradicted(self) -> bool:
        return self.margin >= cv.DECISIVE

    @property
    def fitting(self) -> list:
        """The readings within the decisive margin of the best one, best first."""
        b = self.total[self.best]
        return sorted((r for r in READINGS if b - self.total[r] < cv.DECISIVE), key=lambda r: -self.total[r])

    def to_dict(self) -> dict:
        name = {r: _reading_name(r) for r in READINGS}
        return {"edge": f"{self.edge[0]}/{self.edge[1]}", "n": self.n, "contradicted": bool(self.contradicted),
                "fits": [name[r] for r in self.fitting], "margin": float(self.margin),
                "score": {name[r]: float(self.total[r]) for r in READINGS}, "graph_knows": list(self.refs)}


def _reading_name(r) -> str:
    return {(False, False): "as read", (False, True): "eye inverted", (True, False): "hand inverted",
            (True, True): "hand and eye inverted"}[tuple(r)]  # fmt: skip


# --------------------------------------------------------------------------- #
# evidence
# --------------------------------------------------------------------------- #
def _inv(T):
    return se3.invert_transform(T, check=False)


def _read(A, B, r):
    return (_inv(A) if r[0] else A), (_inv(B) if r[1] else B)


def _evenly(k: int, n: int) -> np.ndarray:
    """At most ``k`` of ``n`` indices, evenly spread."""
    return np.unique(np.linspace(0, n - 1, min(n, k)).round().astype(int))


def _own(A, B):
    """The two class fits of an edge (None below :data:`MIN_OWN_PAIRS` pairs) on at most :data:`OWN_SUBSAMPLE` pairs."""
    if len(A) < MIN_OWN_PAIRS:
        return None
    k = _evenly(OWN_SUBSAMPLE, len(A))
    try:
        return rd.fit_class(A[k], B[k]), rd.fit_class(A[k], _inv(B[k]))
    except (np.linalg.LinAlgError, ValueError):
        return None


def _own_scores(fits) -> dict:
    if fits is None:
        return {r: 0.0 for r in READINGS}
    br = min(f.rot_med for f in fits)
    bt = min(f.trans_med for f in fits)
    cls = [rd.fit_score(f, br, bt) for f in fits]
    return {r: float(cls[int(r[0] != r[1])]) for r in READINGS}


def _own_gives(fits, r):
    if fits is None:
        return None
    return fits[int(r[0] != r[1])].transforms(False, r[0])


def _mean_pose(T):
    return c.transform(c.project_to_so3(T[:, :3, :3].sum(axis=0)), T[:, :3, 3].mean(axis=0))


def _graph_fit(A, B, X, Y, metric: bool):
    """Median residuals (rot [rad], trans [m]), the pairs' worth of evidence and the implied ``(X, Y)``."""
    if X is not None and Y is not None:
        D = _inv(_inv(Y) @ A @ X) @ B
        n_eff, gives = len(A), (X, Y)
    elif X is not None:
        Yk = A @ X @ _inv(B)
        Yh = _mean_pose(Yk)
        D, n_eff, gives = _inv(Yh) @ Yk, len(A) - 1, (X, Yh)
    else:
        Xk = _inv(A) @ Y @ B
        Xh = _mean_pose(Xk)
        D, n_eff, gives = _inv(Xh) @ Xk, len(A) - 1, (Xh, Y)
    rot = float(np.median(rd.rotation_angles(D[:, :3, :3])))
    trans = float(np.median(np.linalg.norm(D[:, :3, 3], axis=1))) if metric else math.nan
    return rot, trans, n_eff, gives


def _score(n, rot, trans, best_rot, best_trans, floor_t) -> float:
    tol = math.log(rd.FIT_TOLERANCE)
    s = max(math.log(max(rot, rd.ROT_FLOOR) / max(best_rot, rd.ROT_FLOOR)) - tol, 0.0)
    if math.isfinite(trans):
        s += max(math.log(max(trans, floor_t) / max(best_trans, floor_t)) - tol, 0.0)
    return -n * s


def _distances(Ts: np.ndarray) -> np.ndarray:
    """Rotation angle [rad] plus translation [m] between every two poses (k, 4, 4): (k, k), for the medoid."""
    R, t = Ts[:, :3, :3], Ts[:, :3, 3]
    tr = np.einsum("aij,bij->ab", R, R)
    return (np.arccos(np.clip(0.5 * (tr - 1.0), -1.0, 1.0))
            + np.linalg.norm(t[:, None, :] - t[None, :, :], axis=2))  # fmt: skip


class _Consensus:
    """What the trusted edges' own fits give for every unknown, and its medoid without a given edge."""

    def __init__(self, own_fits: dict, trusted: list):
        self.by = {}
        for f in trusted:
            if own_fits[f] is None:
                continue
            for kind, key, T in (("X", f[0], own_fits[f][0].X), ("Y", f[1], own_fits[f][0].Y)):
                self.by.setdefault((kind, key), []).append((f, T))
        self.D = {k: _distances(np.stack([T for _, T in v])) for k, v in self.by.items() if len(v) >= 3}

    def without(self, kind: str, key, e):
        """The medoid of the estimates of ``kind:key`` by the trusted edges other than ``e`` (None: none)."""
        est = self.by.get((kind, key), [])
        keep = [i for i, (f, _) in enumerate(est) if f != e]
        if not keep:
            return None
        if len(keep) < 3:
            return est[keep[0]][1]
        D = self.D[(kind, key)][np.ix_(keep, keep)]
        return est[keep[int(np.argmin(D.sum(axis=1)))]][1]


def _check_one(A, B, fits, X, Y, metric: bool) -> EdgeCheck:
    own = _own_scores(fits)
    graph = {r: 0.0 for r in READINGS}
    fit, gives = {}, {}
    n = len(A)
    floor_t = rd.TRANS_FLOOR * max(float(np.median(np.linalg.norm(A[:, :3, 3], axis=1))), 1e-3)
    if X is not None or Y is not None:
        res = {r: _graph_fit(*_read(A, B, r), X, Y, metric) for r in READINGS}
        br = min(v[0] for v in res.values())
        bt = min(v[1] for v in res.values()) if metric else math.nan
        for r, (rot, trans, n_eff, g) in res.items():
            graph[r] = _score(max(n_eff, 0), rot, trans, br, bt, floor_t) if n_eff > 0 else 0.0
            fit[r] = (math.degrees(rot), 1000.0 * trans, "graph") if n_eff > 0 else None
            gives[r] = g
    for r in READINGS:
        if fit.get(r) is None and fits is not None:
            f = fits[int(r[0] != r[1])]
            fit[r] = (math.degrees(f.rot_med), 1000.0 * f.trans_med, "own")
        fit.setdefault(r, None)
        if gives.get(r) is None:
            gives[r] = _own_gives(fits, r)
    total = {r: own[r] + graph[r] for r in READINGS}
    refs = tuple(k for k, v in (("X", X), ("Y", Y)) if v is not None)
    return EdgeCheck(edge=None, n=n, own=own, graph=graph, total=total, fit=fit, gives=gives, refs=refs,
                     consensus={"X": X, "Y": Y})  # fmt: skip


def check_edges(pairs: dict, *, scaled_edges=()) -> dict:
    """Score the four readings of every edge (see the module text).

    Parameters
    ----------
    pairs : dict of (x_id, y_id) -> (A, B)
        Checked pose arrays (N, 4, 4) as read: ``A_k X = Y B_k``.
    scaled_edges : iterable of (x_id, y_id)
        Edges of a camera with an unknown scale (their translations are not compared with the graph's).

    Returns
    -------
    dict of (x_id, y_id) -> EdgeCheck
    """
    scaled = set(scaled_edges)
    own_fits = {e: _own(np.asarray(A), np.asarray(B)) for e, (A, B) in pairs.items()}
    own_ok = {e: f is not None and (lambda s: s[READINGS[0]] >= max(s.values()) - cv.DECISIVE)(_own_scores(f))
              for e, f in own_fits.items()}  # fmt: skip
    trusted = [e for e in pairs if own_ok[e]]
    out = {}
    for _ in range(2):  # once with the edges whose own fit keeps their reading, once without the contradicted
        out = {}
        consensus = _Consensus(own_fits, trusted)
        for e, (A, B) in pairs.items():
            X, Y = consensus.without("X", e[0], e), consensus.without("Y", e[1], e)
            ch = _check_one(np.asarray(A), np.asarray(B), own_fits[e], X, Y, e not in scaled)
            ch.edge = e
            out[e] = ch
        again = [e for e in trusted if not out[e].contradicted]
        if again == trusted:
            break
        trusted = again
    return out


# --------------------------------------------------------------------------- #
# words
# --------------------------------------------------------------------------- #
def _files_of(r, f: EdgeFiles) -> list[tuple[str, str | None]]:
    """The files a reading inverts, with the direction they would then be read as."""
    out = []
    if r[0]:
        out.append((f.hand, _FLIP.get(f.hand_pose)))
    if r[1]:
        out.append((f.eye, _FLIP.get(f.eye_pose)))
    return out


def _reading_text(r, f: EdgeFiles) -> str:
    if r == READINGS[0]:
        return "as read"
    parts = _files_of(r, f)
    names = " and ".join(p for p, _ in parts)
    verb = "inverted" + (f" ({', '.join(d for _, d in parts if d)})" if f.files else "")
    return f"{names} {verb}"


def _pose_text(T) -> str:
    return f"at ({', '.join(f'{v:.3g}' for v in T[:3, 3])}) m"


def _gives_text(ch: EdgeCheck, r) -> str:
    fit = ch.fit.get(r)
    out = []
    if fit is not None:
        rot, tr, src = fit
        where = "against the other edges" if src == "graph" else "on its own"
        out.append(f"fit {rot:.2g} deg" + (f" / {tr:.3g} mm" if math.isfinite(tr) else "") + f" {where}")
    g = ch.gives.get(r)
    if g is not None:
        x, y = ch.edge
        for name, T, ref in ((f"X {x}", g[0], ch.consensus.get("X")), (f"Y {y}", g[1], ch.consensus.get("Y"))):
            if ref is not None and T is ref:
                continue
            if ref is not None:
                d = _inv(ref) @ T
                out.append(f"{name} {math.degrees(float(rd.rotation_angles(d[:3, :3]))):.3g} deg / "
                           f"{1000 * float(np.linalg.norm(T[:3, 3] - ref[:3, 3])):.3g} mm from the other edges'")
            else:
                out.append(f"{name} {_pose_text(T)}")
    return ", ".join(out) or "nothing to compare"


def _statement(r, f: EdgeFiles) -> str:
    """How to state a reading: the per-edge option, or a comment line in each file."""
    if not f.files:
        return "invert " + " and ".join(p for p, _ in _files_of(r, f))
    opts = []
    comments = []
    for which, inv, pose in (("hand", r[0], f.hand_pose), ("eye", r[1], f.eye_pose)):
        if inv:
            opts.append(f"--edge-pose {f.key}/{which}={_FLIP[pose]}")
            comments.append(f"'{_COMMENT[_FLIP[pose]]}' in {f.hand if which == 'hand' else f.eye}")
    return " ".join(opts) + " (or a comment line " + " and ".join(comments) + ")"


def _evidence(ch: EdgeCheck, r) -> str:
    """What rules out the other readings: the edge's own fit, the unknowns the other edges give."""
    out = []
    own = ch.own[r] - min(ch.own.values())
    if own >= cv.DECISIVE:
        out.append(f"its own fit puts {'one file' if r[0] != r[1] else 'both files or neither'} inverted "
                   f"(by {own:.0f} log units)")
    if ch.refs:
        x, y = ch.edge
        known = " and ".join(f"X {x}" if k == "X" else f"Y {y}" for k in ch.refs)
        rest = [q for q in READINGS if q != r]
        g = ch.graph[r] - max(ch.graph[q] for q in rest)
        out.append(f"the {known} of the other edges {'single it out' if g >= cv.DECISIVE else 'agree with it'}"
                   + (f" (by {g:.0f} log units)" if g >= cv.DECISIVE else ""))
    return " and ".join(out) or "nothing else fits"


def _guessed(ch: EdgeCheck, f: EdgeFiles) -> list:
    """The readings that fit as well as the one as read and invert a file read by default (nothing chose it)."""
    if not f.files:
        return []
    b = ch.total[READINGS[0]]
    default = (f.hand_source == "the default", f.eye_source == "the default")
    return [r for r in READINGS[1:] if b - ch.total[r] < cv.DECISIVE and ((r[0] and default[0]) or (r[1] and default[1]))]


def _undecided(ch: EdgeCheck, f: EdgeFiles, guessed: list) -> str:
    why = (f"{ch.n} pair{'s' if ch.n != 1 else ''}; "
           + ("no other edge shares its X or Y" if not ch.refs else
              f"the other edges know only its {' and '.join(ch.refs)}"))  # fmt: skip
    items = [f"({k + 1}) {_reading_text(r, f)}: {_gives_text(ch, r)}" for k, r in enumerate([READINGS[0]] + guessed)]
    which = sorted({w for r in guessed for w, inv in (("hand", r[0]), ("eye", r[1])) if inv})
    opts = " and ".join(f"--{w}-pose (every edge) or --edge-pose {f.key}/{w}=DIRECTION" for w in which)
    return (f"edge {f.key}: nothing in the data tells its readings apart ({why}) and its "
            f"{' and '.join(which)} direction{'s are' if len(which) > 1 else ' is'} only the default: "
            f"{'; '.join(items)}; state {'them' if len(which) > 1 else 'it'} with {opts}, or a comment line in the "
            f"file ('# T_cam_target', '# T_base_ee'), or record more pairs")


def refusal(checks: dict, files: dict, force: bool) -> list[str]:
    """Raise :class:`EdgeReadingError` naming every contradicted edge (``force``: return them as warnings).

    ``files``: edge -> :class:`EdgeFiles` (what each edge was read as and why).
    """
    msgs = []
    for e, ch in checks.items():
        f = files[e]
        if not ch.contradicted:
            guessed = _guessed(ch, f)
            if guessed:
                msgs.append(_undecided(ch, f, guessed))
            continue
        fitting = ch.fitting
        stated = (f"{f.eye_pose} from {f.eye_source}, {f.hand_pose} from {f.hand_source}" if f.files
                  else "as given")  # fmt: skip
        as_read = f"as read ({stated}): {_gives_text(ch, READINGS[0])}"
        by = f"by {ch.margin:.0f} log units"
        if len(fitting) == 1:
            r = fitting[0]
            names = " and ".join(p for p, _ in _files_of(r, f))
            dirs = [d for _, d in _files_of(r, f) if d]
            msg = (f"{names} {'fits' if len(_files_of(r, f)) == 1 else 'fit'} inverted"
                   + (f" (as {' and '.join(dirs)})" if dirs else "")
                   + f", not as read ({by}): read inverted: {_gives_text(ch, r)}; {as_read}; {_evidence(ch, r)}; "
                   + f"{'state it with' if f.files else 'correct it:'} {_statement(r, f)}")
        else:
            items = [f"({k + 1}) {_reading_text(r, f)}: {_gives_text(ch, r)}" for k, r in enumerate(fitting[:_SHOWN])]
            why = ("no other edge shares its X or Y" if not ch.refs else
                   f"the other edges know only its {' and '.join(ch.refs)}")  # fmt: skip
            msg = (f"edge {f.key} does not fit as read ({by}); {len(fitting)} readings fit about equally (within "
                   f"{cv.DECISIVE:.1f} log units) and give different X and Y ({why}): {'; '.join(items)}; "
                   f"{as_read}; state the one that matches the files: "
                   + "; ".join(f"({k + 1}) {_statement(r, f)}" for k, r in enumerate(fitting[:_SHOWN])))
        drop = f"--drop-edge {f.key}" if f.files else f"leave the edge {e!r} out"
        msgs.append(f"{msg}; or {drop}")
    if msgs and not force:
        raise EdgeReadingError(" | ".join(msgs) + ("; --force keeps the edges as read" if any(
            files[e].files for e in checks) else ""))  # fmt: skip
    return [m + "; kept as read (--force)" for m in msgs]
