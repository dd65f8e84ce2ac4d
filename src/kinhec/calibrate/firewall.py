"""The convention firewall: every plausible reading of the input is scored before anything is solved.

Users lose more time to inputs in the wrong convention than to any solver:
the hand poses written as ``T_ee_base``, camera poses as ``T_target_cam``,
millimetres, quaternions scalar first, the two files exchanged, an image
missing from one file.  :func:`check` enumerates the readings of a hand file
and an eye file (:class:`~kinhec.calibrate.readings.Reading`: which file is
the hand, the direction of each, the setup, the units of each, the order of
their quaternion columns, which rows pair) and gives each a score in log
units, the sum of

* what the poses say (:mod:`kinhec.calibrate.readings`): the congruence of the
  rotation angles of the two files (which rows pair) and the fit of the
  direction class (as read, or one file inverted; the quaternion order and the
  units show there);
* physical plausibility (:mod:`kinhec.calibrate.conventions`): a camera (or
  marker) centimetres from the flange, streams whose positions are metres,
  eye translations as long as the hand's;
* what the files say about themselves: their format, comment lines, names,
  and rates (robots report faster than cameras); the usual conventions as a
  weak tie-breaker.

Options given by the user are never overruled.  The decision:

1. If a reading that contradicts an option beats every reading that keeps
   the options by :data:`~kinhec.calibrate.conventions.DECISIVE` (a factor of
   100), the run stops naming the option, the reading that fits and what tells
   them apart (``force``: a warning, the options kept).
2. Of the readings that keep the options, the best one is used when it beats
   every reading that gives different numbers (another ``X``) by the decisive
   margin; when it differs from what the files and defaults state, a note says
   what was corrected and why.
3. Otherwise the run stops naming every reading within the margin and what
   tells them apart -- never recommending one of two readings that fit equally
   (``force``: a warning, the stated reading kept if it is among them).

Readings that fit *exactly* as well by a symmetry of ``A X = Y B`` (eye-in-hand
with ``T_target_cam`` rows and eye-to-hand with ``T_cam_marker`` rows; both files
inverted, ``X`` and ``Y`` exchanged) are not ranked by these scores: the group of
the best reading goes to :mod:`kinhec.calibrate.reading_choice`, which tells them
apart only by what is stated, what the files claim and what is physically
impossible on the data, never by a prior or a default, and otherwise stops
listing each with what it would publish (``Decision.report["fit_the_same"]``).
Exchanged files keep the rule above (the roles as given, unless the evidence
beats them decisively).  The cost of the whole check is in
``Decision.report["cost_s"]`` (CPU seconds).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import conventions as cv
from kinhec.calibrate import pairing as pr
from kinhec.calibrate import reading_choice as rc
from kinhec.calibrate import readings as rd
from kinhec.calibrate import row_alignment as ra
from kinhec.calibrate.observability import MIN_LAMBDA2, MIN_ROT_RANGE_DEG
from kinhec.calibrate.output import ros_static_transform
from kinhec.calibrate.readers import PoseStream, with_quaternion_order
from kinhec.calibrate.readings import Reading
from kinhec.util.errors import InputError
from kinhec.solvers import _common as c

__all__ = ["Decision", "check", "HAND_POSES", "EYE_POSES", "SETUPS_CHECKED", "UNIT_M"]

HAND_POSES = ("base_T_ee", "ee_T_base")
EYE_POSES = ("cam_T_target", "target_T_cam")
SETUPS_CHECKED = ("eye_in_hand", "eye_to_hand")
#: Metres per unit.
UNIT_M = {"m": 1.0, "mm": 1e-3}
#: Fewer pairs than this: the conventions are not checked (too little to score).
MIN_PAIRS_CHECKED = 5
#: Weight of the roles as given (about 1 % of users exchange --hand and --eye): a swap needs evidence of its own
#: (rates, names, format, comments, which file reads as a camera's) to be decided.  Exchanged files fit exactly as
#: well (X inverted); where only the roles as given tell them apart (unstamped eye-to-hand files, both
#: ``T_fixed_moving``, that say nothing about themselves), the run stops naming both readings (:func:`_roles_only`).
ROLE_WEIGHT = float(np.log(100.0))
#: Terms of the data and the priors that must agree (within half a log unit) for two readings to be told apart
#: by nothing but claims.
DATA_TERMS = ("congruence", "fit", "scale", "magnitude", "x_prior", "rates", "view")
#: Two alignments of unstamped rows that differ in at most this many pairs give the same numbers
#: (the outlier gate of the refinement takes care of a pair or two).
CLOSE_PAIRS = 2


@dataclass
class Decision:
    """The reading :func:`check` settled on, with the streams to use.

    Attributes
    ----------
    reading : Reading
        The reading used; ``stated`` is what the input states (its options,
        format, comments and names, then the defaults).
    hand, eye : PoseStream
        The files in the roles of the reading, their quaternions read in its order.
    alignment : Alignment or None
        Rows to pair (unstamped files).
    coarse : CoarseOffset or None
        Clock offset to start from (stamped files).
    scale, scale_std : float
        Ratio of the eye translations to the hand's in the reading's units
        (about 1 for a metric eye stream), from the coarse fit.
    notes, warnings : list of str
    report : dict
        Ranking of the readings (best first, with the evidence of each), the
        margin, the cost.
    """

    reading: Reading
    hand: PoseStream
    eye: PoseStream
    alignment: pr.Alignment | None
    coarse: pr.CoarseOffset | None
    scale: float
    scale_std: float
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    report: dict = field(default_factory=dict)
    stated: Reading | None = None  # what the input states (options, format, comments, names, defaults)


# --------------------------------------------------------------------------- #
# the data of one quaternion reading and one row alignment (or offset)
# --------------------------------------------------------------------------- #
@dataclass
class _Data:
    quat: tuple
    variant: int
    alignment: pr.Alignment | None
    coarse: pr.CoarseOffset | None
    congruence: float
    cong_med: float
    fits: object  # the paired poses (H, E) until fitted, then the two class fits
    med_h: float  # median position magnitude of the hand file [its units]
    med_e: float
    reused: bool = False  # the coarse offset was estimated with another quaternion order


def _inv(T):
    return se3.invert_transform(T, check=False)


def _fits(H, E):
    return [rd.fit_class(H, E), rd.fit_class(H, _inv(E))]


def _streams(hand, eye, quat):
    h = hand if quat[0] in (None, hand.quat_order) else with_quaternion_order(hand, quat[0])
    e = eye if quat[1] in (None, eye.quat_order) else with_quaternion_order(eye, quat[1])
    return h, e


def _unstamped_data(hand, eye, quats, force: bool = False) -> list[_Data]:
    streams = [_streams(hand, eye, q) for q in quats]
    # the angle noise of the best reading, common to all (a wrong quaternion order must not set its own)
    first = [rd.order_alignments(h.T[:, :3, :3], e.T[:, :3, :3]) for h, e in streams]
    meds = [min(m for _, _, m in c if np.isfinite(m)) for c in first if c and any(np.isfinite(m) for _, _, m in c)]
    sigma = max(1.4826 * min(meds), rd.ANGLE_FLOOR) if meds else None
    rows = _rows_by_fit(streams, first, force)
    if rows is not None:
        return [_Data(q, v, al, None, *rd.congruence(h.T[al.hand_index, :3, :3], e.T[al.eye_index, :3, :3], sigma)[:2],
                      _subsample(h, e, al), cv.median_norm(h.T), cv.median_norm(e.T))
                for q, (h, e), (v, al) in zip(quats, streams, rows)]
    out = []
    for q, (h, e) in zip(quats, streams):
        cands = rd.order_alignments(h.T[:, :3, :3], e.T[:, :3, :3], sigma=sigma)
        # the best few: row by row, then the best others
        for v, (al, score, med) in enumerate(cands[:3]):
            idx = np.unique(np.linspace(0, al.hand_index.size - 1, min(rd.SUBSAMPLE, al.hand_index.size)).round()
                            .astype(int))
            H, E = h.T[al.hand_index[idx]], e.T[al.eye_index[idx]]
            out.append(_Data(q, v, al, None, score, med, (H, E), cv.median_norm(h.T), cv.median_norm(e.T)))
    return out


def _subsample(h, e, al):
    idx = np.unique(np.linspace(0, al.hand_index.size - 1, min(rd.SUBSAMPLE, al.hand_index.size)).round().astype(int))
    return h.T[al.hand_index[idx]], e.T[al.eye_index[idx]]


def _rows_by_fit(streams, first, force: bool):
    """The row alignment of each quaternion reading, chosen by the fit (:mod:`kinhec.calibrate.row_alignment`):
    ``[(variant, Alignment)]``, variant 0 when the rows pair one to one; None where it does not apply (the lengths
    differ by more than a few rows, or the files are short or long).  Raises (``force``: a note) when the fit of
    the quaternion reading whose rotations fit best cannot tell its alignments apart."""
    if any(not c for c in first) or max(max(len(h), len(e)) for h, e in streams) > rd.MAX_ALIGN_ROWS:
        return None
    rows = []
    for (h, e), c in zip(streams, first):
        row = ra.align_rows(h.T, e.T, start=max(c, key=lambda x: x[1])[0])
        if row is None:
            return None
        rows.append(row)
    top = min(range(len(rows)), key=lambda k: rows[k].rot_med)
    if not rows[top].decided and not force:
        h, e = streams[top]
        raise InputError(ra.ambiguity(rows[top], h, e))
    out = []
    for row, (h, e) in zip(rows, streams):
        al = ra.with_note(row, h, e, force=force)
        out.append((0 if al.is_identity else 1, al))
    return out


def _stamped_data(hand, eye, quats, stated_quat, offset, max_offset_s) -> list[_Data]:
    out = []
    base = None
    for q in [stated_quat] + [x for x in quats if x != stated_quat]:
        h, e = _streams(hand, eye, q)
        if base is None or (base.peak is not None and base.peak < pr.MIN_PEAK_CORR):
            co = pr.coarse_offset(h, h.T, e, e.T, offset, max_offset_s, inverse_domain=False)
            if base is None:
                base = co
        else:
            co = base
        variants = [co]
        if co.estimated and co.peak is not None and co.peak < pr.MIN_PEAK_CORR:
            # the scan is a pose fit: the other direction class gets its own
            other = pr.coarse_offset(h, h.T, e, _inv(e.T), offset, max_offset_s, inverse_domain=True)
            if abs(other.offset_s - co.offset_s) > 1e-9:
                variants.append(other)
        for v, c in enumerate(variants):
            H, E = pr.sample_pairs(h, h.T, e, e.T, c.offset_s, rd.SUBSAMPLE)
            if len(H) < MIN_PAIRS_CHECKED:
                continue
            d = _Data(q, v, None, c, 0.0, 0.0, (H, E), cv.median_norm(h.T), cv.median_norm(e.T))
            d.reused = q != stated_quat and c is base
            out.append(d)
    if out:  # congruence with the angle noise of the best reading, common to all
        sig = [rd.congruence(d.fits[0][:, :3, :3], d.fits[1][:, :3, :3])[2] for d in out]
        for d in out:
            d.congruence, d.cong_med, _ = rd.congruence(d.fits[0][:, :3, :3], d.fits[1][:, :3, :3], min(sig))
    return out


def _fit_within_reach(datas: list) -> list:
    """Fit the direction classes of the data whose congruence leaves them within reach of the best; drop the rest."""
    if not datas:
        return datas
    best = max(d.congruence for d in datas)
    keep = [d for d in datas if d.congruence >= best - 3 * cv.DECISIVE]
    for d in keep:
        d.fits = _fits(*d.fits)  # (H, E) pairs -> the two class fits
    return keep


# --------------------------------------------------------------------------- #
# claims and scores
# --------------------------------------------------------------------------- #
@dataclass
class _Scored:
    reading: Reading
    data: _Data
    terms: dict
    info: dict
    against: list  # claims contradicted: (Claim, file index or None)

    @property
    def free(self) -> float:
        """Score without the options (what the input says by itself)."""
        return sum(self.terms.values()) - self.terms.get("options", 0.0)

    @property
    def total(self) -> float:
        return sum(self.terms.values())


def _file_role_dir(r: Reading, f: int) -> tuple[str, str]:
    """Role and direction of file ``f`` (0: given as --hand, 1: given as --eye) in reading ``r``."""
    hand_file = 1 if r.swap else 0
    return ("hand", r.hand_pose) if f == hand_file else ("eye", r.eye_pose)


def _contradicts(claim: cv.Claim, f: int | None, r: Reading) -> bool:
    a = claim.attribute
    if a == "frames":
        role, direction = _file_role_dir(r, f)
        return not cv.frames_agree(claim.value, cv.frames_of(role, direction))
    if a == "role":  # the roles as given (f None), or the role a file names
        return r.swap if f is None else _file_role_dir(r, f)[0] != claim.value
    if a == "setup":
        return r.setup != claim.value
    if a == "units":
        return r.units[f] != claim.value
    if a == "quat_order":
        return r.quat[f] is not None and r.quat[f] != claim.value
    if a == "align":
        return r.align != 0 or claim.value is False
    if a in ("hand_pose", "eye_pose"):  # an option is stated about the file given as --hand (or --eye)
        return (r.swap and claim.source == "option") or getattr(r, a) != claim.value
    return False


def _claims(hand: PoseStream, eye: PoseStream, opts: dict, quat_free: tuple, rig: bool) -> list:
    """(Claim, file index or None) for every source, options included."""
    out = []
    for f, s in enumerate((hand, eye)):
        out += [(c, f) for c in cv.file_claims(s)]
    o = opts
    if o.get("hand_pose"):
        out.append((cv.Claim("hand_pose", o["hand_pose"], "option", f"--hand-pose {o['hand_pose']}"), None))
    if o.get("eye_pose"):
        out.append((cv.Claim("eye_pose", o["eye_pose"], "option", f"--eye-pose {o['eye_pose']}"), None))
    if o.get("setup"):
        out.append((cv.Claim("setup", o["setup"], "option", f"--setup {o['setup']}"), None))
    for f in (0, 1):
        u = (o.get("units") or (None, None))[f]
        if u:
            us = o["units"]
            out.append((cv.Claim("units", u, "option", f"--units {us[0] if us[0] == us[1] else ','.join(us)}"), f))
        q = (o.get("quat") or (None, None))[f]
        if q:
            qs = o["quat"]
            out.append((cv.Claim("quat_order", q, "option",
                                 f"--quat-order {qs[0] if qs[0] == qs[1] else ','.join(qs)}"), f))
    # the files in the roles given: a strong habit, not an option (exchanged files are what it checks)
    out.append((cv.Claim("role", "given", "convention", "the files in the roles given (--hand, --eye)",
                         w=ROLE_WEIGHT), None))
    # the usual conventions, as weak tie-breakers
    out.append((cv.Claim("hand_pose", "base_T_ee", "convention", "robot poses are usually T_base_ee"), None))
    out.append((cv.Claim("eye_pose", "cam_T_target", "default", "camera poses from PnP are T_cam_target"), None))
    if not rig:
        out.append((cv.Claim("setup", "eye_in_hand", "convention", "eye-in-hand when no --setup is given", w=1.4), None))
    for f, s in enumerate((hand, eye)):
        out.append((cv.Claim("units", "m", "convention", "metres by default", w=1.4), f))
        if quat_free[f]:
            out.append((cv.Claim("quat_order", "xyzw", "convention", f"the {s.fmt} format stores qx qy qz qw"), f))
    out.append((cv.Claim("align", True, "convention", "rows pair one to one"), None))
    return out


def _score_all(hand, eye, datas, claims, *, scale, rig_reference, values) -> list[_Scored]:
    """Score every reading: the data terms once per (data, class, units), the claims once per reading of the files."""
    best_rot = min(min(f.rot_med for f in d.fits) for d in datas)
    best_trans = min(min(f.trans_med for f in d.fits) for d in datas)
    best_cong = max(d.congruence for d in datas)
    rates = (hand.rate_hz, eye.rate_hz)
    rate_term = {}
    if rates[0] and rates[1]:
        for swap in (False, True):
            rh, re_ = (rates[1], rates[0]) if swap else rates
            rate_term[swap] = cv.rate_log_likelihood(rh, "hand") + cv.rate_log_likelihood(re_, "eye")
        top = max(rate_term.values())
        rate_term = {k: v - top for k, v in rate_term.items()}  # a difference between the role assignments
    claim_cache: dict = {}
    view_cache: dict = {}

    def view(f, q, u):
        """Share of file ``f``'s poses a camera could have taken (quaternions ``q``, units ``u``)."""
        key = (f, q, u)
        if key not in view_cache:
            s = _streams(hand, eye, (q, None) if f == 0 else (None, q))[f]
            view_cache[key] = cv.camera_view_fraction(s.T, None if (scale and f == 1) else UNIT_M[u])
        return view_cache[key]

    out = []
    for d in datas:
        mag_h = {u: float(cv.magnitude_log_prior(d.med_h * UNIT_M[u])) for u in UNIT_M}
        mag_e = {u: 0.0 if scale else float(cv.magnitude_log_prior(d.med_e * UNIT_M[u])) for u in UNIT_M}
        per_fit = []
        for fit in d.fits:
            lens = (float(np.linalg.norm(fit.X[:3, 3])), float(np.linalg.norm(fit.Y[:3, 3])))
            per_fit.append((rd.fit_score(fit, best_rot, best_trans), lens))
        for swap, hp, ep, setup, uh, ue in itertools.product(*values):
            r = Reading(swap=swap, hand_pose=hp, eye_pose=ep, setup=setup, units=(uh, ue), quat=d.quat,
                        align=d.variant)
            k = r.klass
            fit = d.fits[k]
            fit_term, lens = per_fit[k]
            # |t| of X and Y (inverting a pose keeps the length of its translation: see ClassFit)
            x_len, y_len = lens[::-1] if r.hand_file_inverted else lens
            c_h, c_e = UNIT_M[uh], UNIT_M[ue]
            # H X = Y (s E) in file units: the eye translations in metres are c_e / (s c_h) times the hand's
            ratio = c_e / (fit.scale * c_h) if fit.scale > 0 else float("nan")
            x_m = x_len * c_h
            terms = {"congruence": d.congruence - best_cong, "fit": fit_term,
                     "scale": 0.0 if scale else float(cv.scale_log_prior(ratio if np.isfinite(ratio) else -1.0)),
                     "magnitude": mag_h[uh] + mag_e[ue],
                     "x_prior": 0.0 if rig_reference else float(cv.x_log_prior(x_m)),
                     "rates": rate_term.get(swap, 0.0), "view": 0.0, "claims": 0.0, "options": 0.0}
            if not rig_reference:  # which file is the camera's: one complies, the other clearly does not
                fe = 0 if swap else 1
                v_eye, v_hand = view(fe, d.quat[fe], r.units[fe]), view(1 - fe, d.quat[1 - fe], r.units[1 - fe])
                if v_hand >= cv.VIEW_PASS and v_eye <= cv.VIEW_FAIL:
                    terms["view"] = -cv.VIEW_WEIGHT
            key = (swap, hp, ep, setup, uh, ue, d.quat, d.variant != 0)
            if key not in claim_cache:
                against = [(c, f) for c, f in claims if _contradicts(c, f, r)]
                claim_cache[key] = (against, -sum(c.weight for c, _ in against if c.source != "option"),
                                    -sum(c.weight for c, _ in against if c.source == "option"))
            against, terms["claims"], terms["options"] = claim_cache[key]
            info = {"x_m": x_m, "y_m": y_len * c_h, "scale": ratio,
                    "scale_std": abs(ratio) * fit.scale_std / max(abs(fit.scale), 1e-300),
                    "rot_deg": float(np.degrees(fit.rot_med)), "trans_mm": 1000 * fit.trans_med * c_h,
                    "cong_deg": float(np.degrees(d.cong_med)),
                    "view": (view(1 if swap else 0, d.quat[1 if swap else 0], r.units[1 if swap else 0]),
                             view(0 if swap else 1, d.quat[0 if swap else 1], r.units[0 if swap else 1]))
                    if not rig_reference else None}
            out.append(_Scored(r, d, terms, info, list(against)))
    return out


# --------------------------------------------------------------------------- #
# words
# --------------------------------------------------------------------------- #
def _options_of(r: Reading, hand: PoseStream, eye: PoseStream, datas_align, rig: bool) -> list[str]:
    """The command-line options (and actions) that give reading ``r``."""
    out = []
    if r.swap:
        out.append("--hand and --eye exchanged")
    out.append(f"--hand-pose {r.hand_pose}")
    out.append(f"--eye-pose {r.eye_pose}")
    if not rig:
        out.append(f"--setup {r.setup}")
    out.append(f"--units {r.units[0]},{r.units[1]}" if r.units[0] != r.units[1] else f"--units {r.units[0]}")
    if any(q is not None for q in r.quat):
        qs = [q or "-" for q in r.quat]
        out.append(f"--quat-order {qs[0]},{qs[1]}" if qs[0] != qs[1] else f"--quat-order {qs[0]}")
    if hand.t is None or eye.t is None:
        al = datas_align.get((r.quat, r.align))
        out.append("rows paired one to one" if al is None or al.is_identity else al.describe(hand, eye))
    return out


def _changes(r: Reading, ref: Reading, hand, eye, datas_align, rig) -> list[str]:
    a = _options_of(r, hand, eye, datas_align, rig)
    b = set(_options_of(ref, hand, eye, datas_align, rig))
    return [x for x in a if x not in b]


def _why(a: _Scored, b: _Scored, hand: PoseStream, eye: PoseStream) -> str:
    """What tells reading ``a`` from ``b``, from ``a``'s side: the terms that differ by a log unit or more."""
    parts = []
    d = {k: a.terms[k] - b.terms[k] for k in a.terms}
    ia, ib = a.info, b.info
    if abs(d["congruence"]) >= 1:
        parts.append(f"the rotation angles of the two files agree to {ia['cong_deg']:.2g} deg "
                     f"({ib['cong_deg']:.2g} deg the other way)")
    if abs(d["fit"]) >= 1:
        parts.append(f"the motion fits X to {ia['rot_deg']:.2g} deg / {ia['trans_mm']:.3g} mm "
                     f"({ib['rot_deg']:.2g} deg / {ib['trans_mm']:.3g} mm the other way)")
    if abs(d["scale"]) >= 1:
        parts.append(f"the eye translations are {ia['scale']:.4g} times the hand's ({ib['scale']:.4g} the other way)")
    if abs(d["magnitude"]) >= 1:
        parts.append("the positions are " + ("plausible" if d["magnitude"] > 0 else "implausible") +
                     " in these units (metres of a robot or a room, not kilometres or fractions of a millimetre)")
    if abs(d["x_prior"]) >= 1:
        parts.append(f"X puts the camera {_len(ia['x_m'])} from the flange ({_len(ib['x_m'])} the other way; "
                     f"a flange camera sits within about {cv.X_TAIL_M:g} m, most within {cv.X_TYPICAL_M:g} m)")
    if abs(d["rates"]) >= 1:
        parts.append(f"{hand.path} runs at {hand.rate_hz:.3g} Hz and {eye.path} at {eye.rate_hz:.3g} Hz "
                     "(robots and motion capture report faster than cameras)")
    if abs(d["view"]) >= 1:
        cam, rob = (a, b) if d["view"] > 0 else (b, a)  # the reading that takes the complying file as the eye
        f_cam = hand if cam.reading.swap else eye
        f_rob = hand if f_cam is eye else eye
        v_cam, v_rob = cam.info["view"][1], cam.info["view"][0]
        parts.append(f"{f_cam.path} reads as a camera's and {f_rob.path} does not: {v_cam:.0%} of the poses of the "
                     f"first put a target ahead of the camera, within {cv.VIEW_HALF_ANGLE_DEG:g} deg of its axis and "
                     f"facing it, {v_rob:.0%} of the second's")
    ca = {id(c) for c, _ in a.against}
    cb = {id(c) for c, _ in b.against}
    for c, _ in b.against:
        if id(c) not in ca and c.source in ("format", "comment", "name"):
            parts.append(f"as {c.why}")
    for c, _ in a.against:
        if id(c) not in cb and c.source in ("format", "comment", "name"):
            parts.append(f"against {c.why}")
    if not parts:
        conv = [c.why for c, _ in b.against if id(c) not in ca and c.source != "option"]
        parts.append("only the usual conventions (" + "; ".join(conv) + ")" if conv else
                     "nothing in the data, the files or the priors")
    return "; ".join(parts)


def _num(v, digits: int):
    """A plain float rounded for the JSON report (None when not finite)."""
    v = float(v)
    return round(v, digits) if np.isfinite(v) else None


def _len(m: float) -> str:
    return f"{1000 * m:.0f} mm" if m < 1 else f"{m:.3g} m"


# --------------------------------------------------------------------------- #
# the check
# --------------------------------------------------------------------------- #
def _consistent(r: Reading, opts: dict) -> bool:
    if r.swap and (opts.get("hand_pose") or opts.get("eye_pose")):
        return False  # a direction stated for a file in the role given
    if opts.get("hand_pose") and r.hand_pose != opts["hand_pose"]:
        return False
    if opts.get("eye_pose") and r.eye_pose != opts["eye_pose"]:
        return False
    if opts.get("setup") and r.setup != opts["setup"]:
        return False
    for f in (0, 1):
        u = (opts.get("units") or (None, None))[f]
        if u and r.units[f] != u:
            return False
        q = (opts.get("quat") or (None, None))[f]
        if q and r.quat[f] not in (None, q):
            return False
    return True


def _same_numbers(a: _Scored, b: _Scored) -> bool:
    """Readings giving the same numbers: same outcome, or row alignments that differ in a pair or two."""
    ra, rb = a.reading, b.reading
    if ra.outcome == rb.outcome:
        return True
    if (ra.swap, ra.inv_hand, ra.inv_eye, ra.units, ra.quat) != (rb.swap, rb.inv_hand, rb.inv_eye, rb.units, rb.quat):
        return False
    if a.data.alignment is None or b.data.alignment is None:
        return a.data.alignment is None and b.data.alignment is None  # offsets: refined later
    pa, pb = set(a.data.alignment.pairs()), set(b.data.alignment.pairs())
    return len(pa ^ pb) <= 2 * CLOSE_PAIRS


def _stated(hand: PoseStream, eye: PoseStream, opts: dict, claims, rig: bool, quat_free) -> Reading:
    """What the input states: each attribute from its strongest claim (options, format, comments, name), else the default."""
    def strongest(attr, f=None, default=None, convert=lambda v: v):
        best = None
        for c, ff in claims:
            if c.attribute == attr and ff == f and (best is None or c.weight > best.weight):
                best = c
        return convert(best.value) if best is not None else default

    def direction(f, role, default):
        best = None
        for c, ff in claims:
            if c.attribute == "frames" and ff == f and (best is None or c.weight > best.weight):
                best = c
        if best is None:
            return default
        for d in (HAND_POSES if role == "hand" else EYE_POSES):
            if cv.frames_agree(best.value, cv.frames_of(role, d)):
                return d
        return default

    hp = opts.get("hand_pose") or direction(0, "hand", "base_T_ee")
    ep = opts.get("eye_pose") or direction(1, "eye", "cam_T_target")
    setup_claims = [c for c, _ in claims if c.attribute == "setup"]  # about the setup, whichever file says it
    setup = opts.get("setup") or (None if rig or not setup_claims else max(setup_claims, key=lambda c: c.weight).value)
    setup = setup or "eye_in_hand"
    units = tuple((opts.get("units") or (None, None))[f] or strongest("units", f, "m") for f in (0, 1))
    quat = tuple("xyzw" if quat_free[f] else ((opts.get("quat") or (None, None))[f] or s.quat_order)
                 for f, s in enumerate((hand, eye)))
    align = 0 if (hand.t is not None and eye.t is not None) or len(hand) == len(eye) else -1  # -1: none stated
    return Reading(hand_pose=hp, eye_pose=ep, setup=setup, units=units, quat=quat, align=align)


def _unstated(opts: dict, claims, rig: bool) -> list[str]:
    """The options among ``--setup``, ``--hand-pose``, ``--eye-pose`` that neither the user nor the files state (a
    rig states its setup)."""
    said = {(c.attribute, f) for c, f in claims}
    out = []
    if not (rig or opts.get("setup") or any(a == "setup" for a, _ in said)):
        out.append("--setup")
    if not (opts.get("hand_pose") or ("frames", 0) in said):
        out.append("--hand-pose")
    if not (opts.get("eye_pose") or ("frames", 1) in said):
        out.append("--eye-pose")
    return out


def check(hand: PoseStream, eye: PoseStream, *, setup: str | None = None, hand_pose: str | None = None,
          eye_pose: str | None = None, units: tuple | None = None, quat: tuple | None = None, scale: bool = False,
          offset="auto", max_offset_s: float = 0.5, force: bool = False, rig: bool = False,
          rig_reference: bool = False) -> Decision:
    """Score every reading of ``hand`` and ``eye`` and settle on one, or stop (see the module documentation).

    Parameters
    ----------
    hand, eye : PoseStream
        The files as given (``--hand``, ``--eye``), poses as stored.
    setup, hand_pose, eye_pose : str, optional
        What the user stated (None: not stated).
    units, quat : tuple of (str or None), optional
        Units and quaternion order of the two files as stated.
    scale : bool
        A monocular scale of the eye translations is estimated (their units do not matter).
    offset, max_offset_s
        As for :func:`kinhec.calibrate.calibrate` (stamped files).
    force : bool
        Report a contradicted option or an ambiguity as a warning instead of raising.
    rig, rig_reference : bool
        One camera of a rig (setup fixed, no prior on ``X``: cameras sit anywhere on a rig's body); the hand is
        itself a camera.

    Returns
    -------
    Decision

    Raises
    ------
    InputError
        A reading that contradicts an option fits decisively better, or several
        readings that give different ``X`` fit about equally (unless ``force``).
    """
    t0 = time.process_time()
    opts = {"hand_pose": hand_pose, "eye_pose": eye_pose, "setup": setup, "units": units, "quat": quat}
    stamped = hand.t is not None and eye.t is not None
    # quaternion orders that can be tried (formats that store the columns by position, unless stated)
    quat_free = tuple(s.quat_raw is not None and not (quat or (None, None))[f] for f, s in enumerate((hand, eye)))
    # both orders for the files that store their quaternions by position (a stated order is checked too)
    q_vals = [("xyzw", "wxyz") if s.quat_raw is not None else ((quat or (None, None))[f] or s.quat_order,)
              for f, s in enumerate((hand, eye))]
    for f, s in enumerate((hand, eye)):
        q = (quat or (None, None))[f]
        if q and not quat_free[f] and s.quat_raw is None and q != s.quat_order:
            with_quaternion_order(s, q)  # raises: this format names its quaternion columns
    quats = list(itertools.product(*q_vals))
    claims = _claims(hand, eye, opts, quat_free, rig)
    stated = _stated(hand, eye, opts, claims, rig, quat_free)
    n_pairs = min(len(hand), len(eye))
    if n_pairs < MIN_PAIRS_CHECKED:
        unstated = _unstated(opts, claims, rig)
        if unstated and n_pairs >= 3 and not force:  # nothing can check a default here, and a default decides nothing
            raise InputError(f"{hand.span()} and {eye.span()}: {n_pairs} pose pairs are too few to tell how the files "
                             f"were written (the readings are compared from {MIN_PAIRS_CHECKED} pairs on), and nothing "
                             f"states {', '.join(unstated)}: give {' and '.join(unstated)} (or record more poses)")
        return _apply(stated, hand, eye, None, None, 1.0, float("nan"), [], [], {"checked": False}, stamped,
                      offset, max_offset_s)
    h0, _ = _streams(hand, eye, stated.quat)
    if _degenerate(h0.T[:, :3, :3]):
        note = ("conventions: not checked: the hand rotates about one axis only (or hardly at all), which leaves the "
                "directions of the files undetermined as it leaves X")
        return _apply(stated, hand, eye, None, None, 1.0, float("nan"), [note], [], {"checked": False}, stamped,
                      offset, max_offset_s)
    if stamped:
        datas = _stamped_data(hand, eye, quats, stated.quat, offset, max_offset_s)
    else:
        datas = _unstamped_data(hand, eye, quats, force)
        if not datas:
            pr.pair_by_order(hand, hand.T, eye, eye.T)  # raises: lengths differ by more than a few rows
    datas = _fit_within_reach(datas)
    if not datas:
        return _apply(stated, hand, eye, None, None, 1.0, float("nan"), [], [], {"checked": False}, stamped,
                      offset, max_offset_s)
    values = [(False,) if rig else (False, True), HAND_POSES, EYE_POSES, ("eye_in_hand",) if rig else SETUPS_CHECKED,
              tuple(UNIT_M), (stated.units[1],) if scale else tuple(UNIT_M)]
    # the prior on X is a flange's: cameras on a rig's body (or a rig folder's) sit anywhere on it
    no_x_prior = rig or rig_reference or "rig" in (hand.fmt, eye.fmt)
    scored = _score_all(hand, eye, datas, claims, scale=scale, rig_reference=no_x_prior, values=values)
    ctx = _Words(hand, eye, {(d.quat, d.variant): d.alignment for d in datas}, rig, choose=not no_x_prior,
                 odometry=bool(scale) or cv.at_own_origin(eye.T))
    kept = sorted((x for x in scored if _consistent(x.reading, opts)), key=lambda x: -x.total)
    warns = _against_options(ctx, scored, kept, force, opts)
    best, rivals, margin, more = _settle(ctx, kept, stated, force)
    chosen_notes, choice = [], None
    if ctx.choose:  # a rig's cameras sit anywhere on its body: no flange to measure X against
        best, chosen_notes, chosen_warns, choice = _choose(ctx, scored, best, opts, force)
        more = more + chosen_warns
    notes = _notes(ctx, scored, best, rivals, margin, stated, kept, quat_free) + chosen_notes
    d = best.data
    if d.reused:
        d.coarse = None  # estimated with other quaternions: calibrate estimates it again
    report = {"checked": True, "reading": ctx.options(best.reading), "margin": _num(margin, 3),
              "ranking": _ranking(ctx, scored), "n_readings": len(scored)}
    if choice is not None:  # the readings that fit exactly as well, and what told them apart
        report["fit_the_same"] = {"chosen_by": choice.by or "force", "readings": [
            {"reading": list(c.options), "against": list(c.against), "impossible": list(c.impossible),
             "publishes": c.publishes} for c in choice.candidates]}
    dec = _apply(best.reading, hand, eye, d.alignment, d.coarse, best.info["scale"], best.info["scale_std"], notes,
                 warns + more, report, stamped, offset, max_offset_s)
    dec.stated = stated
    report["cost_s"] = round(time.process_time() - t0, 4)
    return dec


@dataclass
class _Words:
    """What the messages need: the files, their row alignments, whether a rig camera is checked."""

    hand: PoseStream
    eye: PoseStream
    aligns: dict
    rig: bool
    choose: bool = True  # readings that fit the same are told apart by reading_choice (not on a rig)
    # the eye stream is stated monocular (``scale=True``) or puts the camera at its reference's origin in some pose
    # (:func:`~kinhec.calibrate.conventions.at_own_origin`): visual odometry or SLAM, whose reference is its own
    # origin or map frame, which the camera need not see (it moves past it): "behind the camera" is no
    # impossibility there
    odometry: bool = False
    _front: dict = field(default_factory=dict)

    @property
    def files(self) -> str:
        return f"{self.hand.span()} and {self.eye.span()}"

    def options(self, r: Reading) -> list[str]:
        return _options_of(r, self.hand, self.eye, self.aligns, self.rig)

    def changes(self, r: Reading, ref: Reading) -> list[str]:
        return _changes(r, ref, self.hand, self.eye, self.aligns, self.rig)

    def why(self, a: _Scored, b: _Scored) -> str:
        return _why(a, b, self.hand, self.eye)

    def front(self, r: Reading, quat: tuple) -> tuple[float, float]:
        """Shares of the eye file's poses that put the target in front of the camera, in ``r``'s eye direction and
        the other (:func:`~kinhec.calibrate.conventions.front_fraction`)."""
        f = 0 if r.swap else 1
        key = (f, quat[f])
        if key not in self._front:
            T = _streams(self.hand, self.eye, quat)[f].T
            self._front[key] = (cv.front_fraction(T), cv.front_fraction(_inv(T)))
        as_read, inverted = self._front[key]
        return (as_read, inverted) if r.eye_pose == "cam_T_target" else (inverted, as_read)


def _fits_text(x: _Scored) -> str:
    return (f"X {_len(x.info['x_m'])} from the flange, Y {_len(x.info['y_m'])}, fit {x.info['rot_deg']:.2g} deg / "
            f"{x.info['trans_mm']:.3g} mm")


def _against_options(ctx: _Words, scored: list, kept: list, force: bool, opts: dict) -> list[str]:
    """Raise (or, with ``force``, warn) when a reading against the options beats every reading that keeps them."""
    best_free = max(scored, key=lambda x: x.free)
    # of the readings that give its numbers, the one that keeps most options (eye-to-hand with T_cam_marker
    # and eye-in-hand with T_target_cam are the same numbers)
    best_free = max((x for x in scored if _same_numbers(x, best_free) and x.free >= best_free.free - 1e-9),
                    key=lambda x: x.total)
    best_kept = kept[0]
    if ctx.choose and _twins(best_free, best_kept) and _choice(ctx, scored, best_kept, opts).refusal is None:
        return []  # they fit exactly as well, and what is stated, claimed or possible picks one (reading_choice)
    given = list(dict.fromkeys(c.why for c, _ in best_free.against if c.source == "option"))
    if best_free.free - best_kept.free < cv.DECISIVE or not given:
        return []
    by = f"by {best_free.free - best_kept.free:.1f} log units"
    fits = f"({_fits_text(best_free)})"
    if best_free.reading.swap:
        msg = (f"{ctx.files}: {ctx.hand.path} given as --hand and {ctx.eye.path} as --eye look exchanged ({by}): "
               f"{ctx.why(best_free, best_kept)}; they fit with --hand {ctx.eye.path} --eye {ctx.hand.path}"
               + "".join(f" {o}" for o in ctx.changes(best_free.reading, best_kept.reading)
                         if not o.startswith("--hand and")) + f" {fits}")
    else:
        keep = [o for o in ctx.changes(best_kept.reading, best_free.reading) if o not in given]
        msg = (f"{ctx.files}: {' and '.join(given)} {'does' if len(given) == 1 else 'do'} not fit these files ({by}): "
               f"with {'it' if len(given) == 1 else 'them'}" + (f" the files read as {', '.join(keep)}" if keep else "")
               + f": {ctx.why(best_kept, best_free)}; they fit with "
               + ", ".join(ctx.changes(best_free.reading, best_kept.reading)) + f" {fits}")
    if not force:
        raise InputError(msg)
    return [msg + "; kept as given (--force)"]


def _settle(ctx: _Words, kept: list, stated: Reading, force: bool):
    """The best reading that keeps the options, if it beats every reading with other numbers decisively.

    Returns ``(best, rivals, margin, warnings)``; raises naming the readings within the margin otherwise (with
    ``force``: the stated reading among them, or the best, and a warning).
    """
    best = kept[0]
    # readings that fit exactly as well (another setup, X and Y exchanged) are told apart by reading_choice
    rivals = [x for x in kept if not _same_numbers(x, best) and not (ctx.choose and _twins(x, best))]
    margin = best.total - rivals[0].total if rivals else float("inf")
    swapped = next((x for x in rivals if x.reading.swap != best.reading.swap), None)
    tie = swapped is not None and _roles_only(best, swapped)
    if margin >= cv.DECISIVE and not tie:
        return best, rivals, margin, []
    distinct = []  # one entry per distinct outcome within the margin (and the exchanged files nothing tells)
    for x in [best] + [x for x in rivals if best.total - x.total < cv.DECISIVE or (tie and x is swapped)]:
        if not any(_same_numbers(x, y) for y in distinct):
            distinct.append(x)
    opts_of = [ctx.options(x.reading) for x in distinct[:4]]
    shared = set.intersection(*map(set, opts_of))
    items = [f"({k + 1}) {', '.join(o for o in opts_of[k] if o not in shared) or 'as given'}: {_fits_text(x)}"
             for k, x in enumerate(distinct[:4])]
    msg = (f"{ctx.files}: {len(distinct)} readings fit about equally (within {cv.DECISIVE:.1f} log units) and give "
           f"different X: {'; '.join(items)}; what tells (1) from (2): {ctx.why(distinct[0], distinct[1])}; "
           "state the one that matches your files with the options above")
    if distinct[0].reading.swap != distinct[1].reading.swap:
        msg += ("; which file is which can also be said in the files: a comment line or a file name naming the "
                "frames of each (# T_base_ee, # T_cam_marker, robot_poses.csv, camera_poses.csv), or --force to "
                "keep the roles as given")
    if not force:
        raise InputError(msg)
    stated_s = _stated_scored(kept, stated)
    if stated_s is not None and any(_same_numbers(stated_s, x) for x in distinct):
        best = stated_s
    kept_text = ", ".join(ctx.changes(best.reading, stated)) or "the stated reading"
    return best, rivals, margin, [f"{msg} (--force: kept {kept_text})"]


def _twins(a: _Scored, b: _Scored) -> bool:
    """Readings that fit exactly as well by a symmetry of ``A X = Y B``: the same data, roles, units and direction
    class, read in either setup or with both files inverted (X and Y exchanged)."""
    ra, rb = a.reading, b.reading
    return a.data is b.data and ra.swap == rb.swap and ra.units == rb.units and ra.klass == rb.klass


#: Sources of what a file claims about itself.
FILE_SOURCES = ("format", "comment", "name")


def _candidate(ctx: _Words, x: _Scored) -> rc.Candidate:
    """A reading of a twin group as :mod:`kinhec.calibrate.reading_choice` sees it."""
    r = x.reading
    eth = r.setup == "eye_to_hand"
    opts = ([] if ctx.rig else [f"--setup {r.setup}"]) + [f"--hand-pose {r.hand_pose}", f"--eye-pose {r.eye_pose}"]
    against = [(c, f) for c, f in x.against if c.source in FILE_SOURCES and c.attribute in ("frames", "setup")]
    X, Y = x.data.fits[r.klass].transforms(r.swap, r.hand_file_inverted)
    X, Y = X.copy(), Y.copy()
    for T, m in ((X, x.info["x_m"]), (Y, x.info["y_m"])):  # the coarse fit's translations in metres
        n = float(np.linalg.norm(T[:3, 3]))
        T[:3, 3] *= m / n if n > 0 else 1.0
    thing = "marker" if eth else "camera"
    impossible = []
    if x.info["x_m"] > cv.X_IMPOSSIBLE_M:
        impossible.append(f"X puts the {thing} {_len(x.info['x_m'])} from the flange it is mounted on (more than "
                          f"{cv.X_IMPOSSIBLE_M:g} m)")
    # a target the camera observes (PnP on a board, a tag) lies in front of it; an odometry's origin need not
    own, other = (1.0, 1.0) if ctx.odometry else ctx.front(r, x.data.quat)
    if own < 1.0 - cv.BEHIND_MOST and other >= cv.VIEW_PASS:
        impossible.append(f"the {'marker' if eth else 'target'} lies behind the camera in {1 - own:.0%} of the views "
                          f"(read the other way, in front in {other:.0%})")
    if eth:
        summary = (f"X = T_ee_marker, the marker {_len(x.info['x_m'])} from the flange; Y = T_base_cam, the camera "
                   f"{_len(x.info['y_m'])} from the base")
        publishes = ros_static_transform(Y, "base", "cam")
    else:
        summary = (f"X = T_ee_cam, the camera {_len(x.info['x_m'])} from the flange; Y = T_base_target, the target "
                   f"{_len(x.info['y_m'])} from the base")
        publishes = ros_static_transform(X, "ee", "cam")
    return rc.Candidate(x, r.setup, r.hand_pose, r.eye_pose, tuple(opts), tuple(c.why for c, _ in against),
                        float(sum(c.weight for c, _ in against)), tuple(impossible), summary + " (coarse fit)",
                        publishes)


def _choice(ctx: _Words, scored: list, best: _Scored, opts: dict) -> rc.Choice:
    """:func:`reading_choice.choose` on the readings that fit exactly as well as ``best``."""
    group = [x for x in scored if _twins(x, best) and (x.reading.quat, x.reading.align) == (best.reading.quat,
                                                                                           best.reading.align)]
    stated = rc.Statement(opts.get("setup"), opts.get("hand_pose"), opts.get("eye_pose"))
    return rc.choose([_candidate(ctx, x) for x in group], stated, ctx.files)


def _choose(ctx: _Words, scored: list, best: _Scored, opts: dict, force: bool):
    """Of the readings that fit exactly as well as ``best``, the one :func:`reading_choice.choose` picks.

    Returns ``(reading, notes, warnings)``; raises (with ``force``: warns and keeps ``best``) when it refuses.
    """
    choice = _choice(ctx, scored, best, opts)
    if choice.refusal is None:
        return choice.chosen.key, choice.notes, [], choice
    if not force:
        raise InputError(choice.refusal)
    return best, [], [f"{choice.refusal} (--force: kept {', '.join(ctx.options(best.reading)[:3])})"], choice


def _roles_only(a: _Scored, b: _Scored) -> bool:
    """Nothing but the roles as given (and the weakest defaults) tells readings ``a`` and ``b`` apart: the data and
    the priors agree, and the claims one contradicts and the other keeps weigh less than a log unit besides the roles."""
    if any(abs(a.terms[k] - b.terms[k]) >= 0.5 for k in DATA_TERMS):
        return False
    ia, ib = {id(c) for c, _ in a.against}, {id(c) for c, _ in b.against}
    rest = [c for c, f in a.against + b.against if (id(c) in ia) != (id(c) in ib)
            and not (c.attribute == "role" and f is None)]
    return sum(c.weight for c in rest) < 1.0


def _stated_scored(kept: list, stated: Reading):
    return next((x for x in kept if x.reading == stated or x.reading.outcome == stated.outcome), None)


def _notes(ctx: _Words, scored, best, rivals, margin, stated, kept, quat_free) -> list[str]:
    """What was read otherwise than the input states and why; a swap nothing tells; the ranking in one line."""
    notes = []
    stated_s = _stated_scored(kept, stated)
    if stated_s is None or not _same_numbers(best, stated_s):
        why = ctx.why(best, stated_s) if stated_s is not None else "the files hold different numbers of poses"
        notes.append(f"conventions: corrected to {', '.join(ctx.changes(best.reading, stated))}: {why}")
    elif best.reading != stated and ctx.changes(best.reading, stated):
        notes.append(f"conventions: read with {', '.join(ctx.changes(best.reading, stated))} (the same numbers as "
                     f"{', '.join(ctx.changes(stated, best.reading))}; the files say so)")
    swapped = [x for x in scored if x.reading.swap != best.reading.swap and not _same_numbers(x, best)]
    if swapped:
        sw = max(swapped, key=lambda x: x.total)
        if _roles_only(best, sw):
            # reached with --force only: otherwise the run stops naming both readings
            notes.append("conventions: the poses fit as well with --hand and --eye exchanged (X inverted); nothing in "
                         "the files (format, names, comments, rates, which reads as a camera's) tells which is which: "
                         "the roles as given kept (--force)")
    plain = Reading(quat=tuple("xyzw" if f else s.quat_order for f, s in zip(quat_free, (ctx.hand, ctx.eye))))
    runner = (f"by {margin:.1f} log units over {', '.join(ctx.changes(rivals[0].reading, best.reading))}" if rivals
              else "(no other reading gives different numbers)")
    used = ", ".join(ctx.changes(best.reading, plain)) or "the default reading"
    notes.append(f"conventions: {len(scored)} readings scored; {used} first {runner}")
    return notes


def _ranking(ctx: _Words, scored: list, top: int = 8) -> list[dict]:
    """The best readings that give distinct numbers, with their scores and terms (the JSON report)."""
    out, seen = [], []
    for x in sorted(scored, key=lambda x: -x.total):
        if any(_same_numbers(x, y) for y in seen):
            continue
        seen.append(x)
        out.append({"reading": ctx.options(x.reading), "score": _num(x.total, 3),
                    "terms": {k: _num(v, 3) for k, v in x.terms.items()}, "X_t_m": _num(x.info["x_m"], 4),
                    "Y_t_m": _num(x.info["y_m"], 4),
                    "fit_deg_mm": [_num(x.info["rot_deg"], 4), _num(x.info["trans_mm"], 4)],
                    "scale": _num(x.info["scale"], 6)})
        if len(out) >= top:
            break
    return out


def _degenerate(R: np.ndarray) -> bool:
    """Rotations about one axis only, or within 2 deg of each other: no reading can be told by its fit."""
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    Rm = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    w = c.rotvecs(Rm.T @ R)
    spread = float(np.degrees(np.linalg.norm(w, axis=1).max())) * 2
    return c.axis_scatter_lambda2(w) < MIN_LAMBDA2 or spread < MIN_ROT_RANGE_DEG


def _apply(r: Reading, hand, eye, alignment, coarse, s, s_std, notes, warns, report, stamped, offset,
           max_offset_s) -> Decision:
    h, e = _streams(hand, eye, r.quat)
    if r.swap:
        h, e = e, h
        if alignment is not None:  # its indices follow the files
            alignment = alignment.swapped()
        if coarse is not None and coarse.estimated:  # estimated with the roles the other way: calibrate estimates
            coarse = None                             # it again (eye stamp = hand time + offset)
        elif coarse is not None:
            coarse = pr.CoarseOffset(-coarse.offset_s)
    if stamped and coarse is None:
        coarse = pr.CoarseOffset(0.0) if offset in (None, "none") else None
    return Decision(r, h, e, alignment, coarse, s, s_std, notes, warns, report, stated=r)
