"""What a pose file says about its own conventions, and what is physically plausible.

The convention firewall (:mod:`kinhec.calibrate.firewall`) weighs every
reading of the input by the data (:mod:`kinhec.calibrate.readings`) and by
the evidence collected here, in log-likelihood units (natural logarithm; a
difference of :data:`DECISIVE` = ln 100 is decisive).

Claims
------
A :class:`Claim` is one statement about one file or about the setup, with the
source it comes from and that source's weight (:data:`WEIGHTS`): a reading
that contradicts it loses the weight.

``option``
    Given on the command line (``--hand-pose``, ``--units``, ...).  Never
    overruled: a reading against it is refused, not applied.
``format``
    Fixed by the file format (Tabb's ``robot_cali.txt`` holds ``T_ee_base`` in
    millimetres, a rig folder camera-to-world poses, a kinhec dataset its own).
``comment``
    A comment line of the file names its frames (``# T_target_cam``,
    ``# pose of cam in target``), the setup (``eye_to_hand``), or the units.
``name``
    The file name names the frames: explicitly (``T_base_ee``, ``cam_T_target``,
    ``gripper2base``, ``cam_in_base``) or as two adjacent frame words read as
    ``parent_child`` (``…_target_ir``, ``…_base_ee_meas``), the ROS and ETH
    habit and kinhec's own export; or, without frames, its role
    (``robot_poses.txt``, ``camera.tum``).
``convention``
    The usual case where nothing is said: robot poses are ``T_base_ee``,
    TUM quaternions are scalar last, files are paired row by row (about 95 %
    of files: ln 19 ~ 3); translations in metres, eye-in-hand when no
    ``--setup`` is given (about 80 %: 1.4).
``default``
    A weak tie-breaker: camera poses ``T_cam_target`` (PnP) rather than
    ``T_target_cam`` (SLAM, motion capture).

Frames are compared by kind: ``base`` (robot base), ``ee`` (flange, tool,
mocap body), ``cam``, ``target`` (board, tag, marker) and ``world`` (a fixed
frame that may be the robot's base or the target's: mocap, map, odometry).

Priors
------
:func:`x_log_prior`: a camera (or a marker) on a flange sits a few millimetres
(:data:`X_MIN_M`) to a few centimetres (:data:`X_TYPICAL_M`) from it, the
prior flat there; farther it falls as a log-normal (:data:`X_LOG_STD`), and
beyond about the longest mounts (:data:`X_TAIL_M`) by a Gaussian of
:data:`X_FALL_M` as well.  ``Y`` (base to target or base to camera) gets no prior:
mocap and SLAM worlds put it anywhere, even at the identity.
:func:`magnitude_log_prior`: median positions of a stream in
[:data:`MIN_PLAUSIBLE_M`, :data:`MAX_PLAUSIBLE_M`].
:func:`scale_log_prior`: the eye translations are about as long as the hand's
(``ln s`` with a standard deviation :data:`SCALE_LOG_STD`) unless a
monocular scale is estimated.
:func:`rate_log_likelihood`: robots and motion capture report at tens to
thousands of Hz, cameras at a few to about a hundred.

Physical impossibility
----------------------
Priors score readings; they never decide between readings that fit exactly as
well (:mod:`kinhec.calibrate.reading_choice`).  Those are told apart, after what
is stated and what the files claim, only by what is impossible on the data: a
camera or marker more than :data:`X_IMPOSSIBLE_M` from the flange it is mounted
on, or the target behind the camera (:func:`front_fraction`) in more than
:data:`BEHIND_MOST` of the views while the file read the other way puts it in
front in :data:`VIEW_PASS` of them (a camera's file).  The latter holds for a
target the camera observes (a board or a tag, PnP poses), not for a stream
stated monocular (``scale=True``: visual odometry or SLAM, whose reference is
its own origin or map frame, which the camera moves past) nor for one that puts
the camera at its reference's origin in some pose (:func:`at_own_origin`: the
first pose of an odometry, which no view of a target can be): there it is not
applied.

Which file is the camera's
--------------------------
A camera sees its target: read as ``T_cam_target`` (eye-in-hand) or
``T_cam_marker`` (eye-to-hand), a camera's file puts every target ahead of the
camera within its field of view (:data:`VIEW_HALF_ANGLE_DEG` from the optical
axis ``z``), at a range where it can be detected (:data:`VIEW_RANGE_M`), and
facing it (a board or a tag seen more than :data:`FACING_DEG` from its normal
``z`` is not detected).  :func:`camera_view_fraction` counts the poses that
comply, in the better of the file's two directions.  A robot's flange in its
base frame (or the base in the flange frame) need not: on the real sets kept in
the tests 0-43 % of a robot's poses comply, 100 % of a camera's.  It is
evidence only where one file complies (:data:`VIEW_PASS` of its poses; a few bad
detections are tolerated) and the other clearly does not (:data:`VIEW_FAIL`):
motion-capture and SLAM eye streams (a camera's pose in a world) need not
comply either, and then nothing is concluded.  The weight (:data:`VIEW_WEIGHT`)
tells exchanged files apart together with other evidence, not against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Claim", "WEIGHTS", "DECISIVE", "file_claims", "frames_in", "frames_of", "frames_agree",
           "x_log_prior", "magnitude_log_prior", "scale_log_prior", "rate_log_likelihood", "median_norm",
           "MAX_PLAUSIBLE_M", "MIN_PLAUSIBLE_M", "X_TYPICAL_M", "X_LOG_STD", "X_TAIL_M", "X_FALL_M", "X_MIN_M",
           "SCALE_LOG_STD", "camera_view_fraction", "VIEW_HALF_ANGLE_DEG", "FACING_DEG", "VIEW_RANGE_M",
           "VIEW_PASS", "VIEW_FAIL", "VIEW_WEIGHT", "X_IMPOSSIBLE_M", "front_fraction", "BEHIND_MOST", "at_own_origin"]

#: Weight [log units] a reading loses for contradicting a claim of each source.
WEIGHTS = {"option": 10.0, "format": 8.0, "comment": 6.0, "name": 3.0, "convention": 3.0, "default": 0.4}
#: A margin of ln(100): one reading is 100 times as likely as the next.
DECISIVE = float(np.log(100.0))

#: Median position magnitude [m] above which a stream is implausible (millimetres read as metres).
MAX_PLAUSIBLE_M = 30.0
#: Median position magnitude [m] below which a stream is implausible (metres read as millimetres).
MIN_PLAUSIBLE_M = 0.03
#: Distance of a camera (or marker) from the flange [m] up to which the prior is flat ...
X_TYPICAL_M = 0.08
#: ... beyond which it falls as a log-normal of this standard deviation (of ln distance) ...
X_LOG_STD = 1.0
#: ... and, beyond this distance [m] (about the longest camera mounts) ...
X_TAIL_M = 0.3
#: ... by a Gaussian of this standard deviation [m] as well.
X_FALL_M = 0.1
#: Below this distance [m] the prior falls too (by half a decade per standard deviation): a camera's
#: optical centre does not sit at the flange's origin.
X_MIN_M = 0.002
#: Standard deviation of ln(eye / hand translation scale) for a metric eye stream.
SCALE_LOG_STD = 0.25
#: Half angle [deg] of the field of view a target lies in (about that of a wide-angle lens).
VIEW_HALF_ANGLE_DEG = 60.0
#: Largest angle [deg] between a target's normal (its ``z``, either sign) and the line of sight that is still detected.
FACING_DEG = 60.0
#: Range [m] at which a target is detected.
VIEW_RANGE_M = (0.03, 15.0)
#: Share of a file's poses in view above which it reads as a camera's ...
VIEW_PASS = 0.9
#: ... and below which it does not.
VIEW_FAIL = 0.8
#: Weight [log units] of one file reading as a camera's and the other not.
VIEW_WEIGHT = 3.0
#: A camera (or marker) mounted on a flange farther than this [m] from it is taken as physically impossible when
#: readings that fit the same are told apart (:mod:`kinhec.calibrate.reading_choice`; the prior above stays a
#: score): longer than the longest mounts, shorter than a base-to-target or base-to-camera distance.
X_IMPOSSIBLE_M = 0.5
#: A reading that puts the target behind the camera in more than this share of the views is physically impossible
#: (when the file read the other way puts it in front in :data:`VIEW_PASS` of them: a camera's file).
BEHIND_MOST = 0.5
#: ln(rate / Hz): centre and spread of robot/mocap rates and of camera rates.
_RATE_HAND = (np.log(200.0), 1.2)
_RATE_EYE = (np.log(30.0), 0.7)


@dataclass(frozen=True)
class Claim:
    """One statement about a file (or the setup).

    Attributes
    ----------
    attribute : str
        ``"frames"`` (value ``(parent_kind, child_kind)``, either may be None),
        ``"role"`` (``"hand"`` or ``"eye"``), ``"setup"``, ``"units"`` or ``"quat_order"``.
    value : object
    source : str
        A key of :data:`WEIGHTS`.
    why : str
        Where it comes from, for messages (``"its name …_target_ir"``).
    """

    attribute: str
    value: object
    source: str
    why: str
    w: float | None = None  # a weight of its own (else the source's)

    @property
    def weight(self) -> float:
        return WEIGHTS[self.source] if self.w is None else self.w


# --------------------------------------------------------------------------- #
# frame words
# --------------------------------------------------------------------------- #
_KIND_WORDS = {
    "base": ("base", "robotbase", "base_link", "baselink", "robot"),
    "world": ("world", "w", "map", "odom", "vicon", "mocap", "optitrack", "origin", "global", "fixed"),
    "ee": ("ee", "eef", "tcp", "flange", "tool", "tool0", "gripper", "hand", "effector", "endeffector", "wrist",
           "body", "rigidbody"),
    "cam": ("cam", "camera", "ir", "rgb", "color", "colour", "depth", "optical", "eye", "sensor"),
    "target": ("target", "board", "chessboard", "checkerboard", "charuco", "aprilgrid", "apriltag", "tag", "marker",
               "pattern", "calib", "grid", "object"),
}
_WORD_KIND = {w: k for k, ws in _KIND_WORDS.items() for w in ws}
_CAM_NUMBERED = re.compile(r"^(cam|camera)\d+$")
#: Kinds that a file of each role relates.
ROLE_KINDS = {"hand": ("base", "ee"), "eye": ("cam", "target")}


def _kind(word: str) -> str | None:
    w = word.lower()
    if w in _WORD_KIND:
        return _WORD_KIND[w]
    if _CAM_NUMBERED.match(w):
        return "cam"
    return None


_QUALIFIERS = frozenset(("meas", "measured", "gt", "groundtruth", "truth", "raw", "image", "img", "images", "poses",
                         "pose", "traj", "trajectory", "data", "est", "estimated", "filtered", "log", "stamped",
                         "sync", "synced", "final", "out", "tf", "transform", "transforms"))


def _tokens(text: str) -> list[str]:
    """Words of a name or comment; ROS's ``base_link`` stays one word."""
    out: list[str] = []
    for w in re.split(r"[^A-Za-z0-9]+|_", text):
        if not w:
            continue
        if w.lower() == "link" and out and out[-1].lower() == "base":
            out[-1] += "_link"
            continue
        out.append(w)
    return out


def frames_in(text: str) -> tuple[tuple[str | None, str | None], str] | None:
    """Frame kinds ``(parent, child)`` a name or comment states, with the words that state them.

    Explicit forms first (the last one found): ``T_a_b`` and ``a_T_b`` (pose of
    ``b`` in ``a``), ``a2b`` (OpenCV's ``gripper2base`` = ``T_base_gripper``),
    ``a_in_b`` (``T_b_a``).  Otherwise the frame words the text ends with
    (after qualifiers such as ``meas``, ``gt``, ``raw``, ``image``), read as
    ``parent_child`` -- the ROS and ETH habit and kinhec's export (``…_target_ir``,
    ``…_base_ee_meas``).  None when the text names no frames.
    """
    for pat in _SETUP_WORDS.values():  # "eye_in_hand" names a setup, not a pose of an eye in a hand
        text = pat.sub(" ", text)
    toks = _tokens(text)
    low = [t.lower() for t in toks]
    found = {}  # priority -> the last match of that form
    for i, w in enumerate(low):
        if w == "t" and i + 2 < len(low) and _kind(low[i + 1]) and _kind(low[i + 2]):
            found[3] = ((_kind(low[i + 1]), _kind(low[i + 2])), f"T_{toks[i + 1]}_{toks[i + 2]}")
        if w == "t" and 0 < i < len(low) - 1 and _kind(low[i - 1]) and _kind(low[i + 1]):
            found[3] = ((_kind(low[i - 1]), _kind(low[i + 1])), f"{toks[i - 1]}_T_{toks[i + 1]}")
        m = re.fullmatch(r"([a-z]+\d*)2([a-z]+\d*)", w)
        if m and _kind(m.group(1)) and _kind(m.group(2)):
            found[2] = ((_kind(m.group(2)), _kind(m.group(1))), toks[i])
        if w == "in" and 0 < i < len(low) - 1 and _kind(low[i - 1]) and _kind(low[i + 1]):
            found[1] = ((_kind(low[i + 1]), _kind(low[i - 1])), f"{toks[i - 1]} in {toks[i + 1]}")
    if found:
        return found[max(found)]
    end = len(low)
    while end > 0 and (low[end - 1] in _QUALIFIERS or low[end - 1].isdigit()):
        end -= 1
    groups: list[tuple[str, int]] = []  # (kind, first token) of the trailing run of frame words
    i = end - 1
    while i >= 0 and _kind(low[i]):
        k = _kind(low[i])
        if groups and groups[-1][0] == k:
            groups[-1] = (k, i)
        else:
            groups.append((k, i))
        i -= 1
    if len(groups) >= 2:
        (child, _), (parent, pi) = groups[0], groups[1]
        if not {parent, child} <= {"base", "world"}:
            return (parent, child), "_".join(toks[pi:end])
    return None


def _frame_kind(frame: str | None) -> str | None:
    """Kind of a frame name (``camera_optical`` -> cam, ``base_link`` -> base), None when its words name none or several."""
    if not frame:
        return None
    kinds = {_kind(w.lower()) for w in _tokens(frame)} - {None}
    return kinds.pop() if len(kinds) == 1 else None


def frames_of(role: str, direction: str) -> tuple[str, str]:
    """Frame kinds ``(parent, child)`` of a file read in ``role`` (``"hand"``/``"eye"``) with ``direction``."""
    return {"base_T_ee": ("base", "ee"), "ee_T_base": ("ee", "base"), "cam_T_target": ("cam", "target"),
            "target_T_cam": ("target", "cam")}[direction] if role in ROLE_KINDS else ("", "")


def frames_agree(claimed: tuple, implied: tuple) -> bool:
    """Whether claimed frame kinds (either may be None) fit the kinds a reading implies (``world`` fits base and target)."""
    for c, i in zip(claimed, implied):
        if c is None:
            continue
        if c != i and not (c == "world" and i in ("base", "target")):
            return False
    return True


#: Words that name a file's role on their own (``robot_poses.txt``, ``camera.tum``).
_ROLE_WORDS = {"hand": ("robot", "hand", "arm", "gripper", "tcp", "flange", "ee", "eef", "tool", "vicon", "mocap",
                        "optitrack", "joint", "joints", "kinematics", "fk"),
               "eye": ("cam", "camera", "eye", "image", "images", "img", "board", "target", "marker", "tag",
                       "apriltag", "chessboard", "checkerboard", "charuco", "pnp", "detection", "detections", "vo",
                       "slam", "odometry", "rgb", "ir", "depth")}

_SETUP_WORDS = {"eye_in_hand": re.compile(r"eye[\s_\-]*in[\s_\-]*hand", re.IGNORECASE),
                "eye_to_hand": re.compile(r"eye[\s_\-]*to[\s_\-]*hand", re.IGNORECASE)}
_MM = re.compile(r"(?<![a-z])(mm|millimet(er|re)s?)(?![a-z])", re.IGNORECASE)
_M = re.compile(r"(\[m\]|(?<![a-z])met(er|re)s(?![a-z]))", re.IGNORECASE)


def _frames_text(kinds) -> str:
    return "T_" + "_".join(k or "?" for k in kinds)


def file_claims(stream) -> list[Claim]:
    """Every claim a :class:`~kinhec.calibrate.readers.PoseStream` makes about itself (format, comments, name)."""
    from pathlib import Path

    out: list[Claim] = []
    name = Path(stream.path).name
    fmt = f"the {stream.fmt} format"
    frames = getattr(stream, "frames", None)
    if stream.direction is not None:
        role = "hand" if stream.direction in ("base_T_ee", "ee_T_base") else "eye"
        # a bag's frame pair states the direction only as far as the user named its frames in order
        out.append(Claim("frames", frames_of(role, stream.direction), "name" if frames else "format",
                         f"{name} holds {stream.direction} ({'the frame pair as given' if frames else fmt})"))
    if frames:  # a bag: the tf tree (or the message header) names the frames of T_parent_child
        kinds = tuple(_frame_kind(f) for f in frames)
        if any(kinds):
            out.append(Claim("frames", kinds, "comment", f"{name}: its frames {' -> '.join(f or '?' for f in frames)}"))
    if stream.units is not None:
        out.append(Claim("units", stream.units, "format", f"{name} is in {stream.units} ({fmt})"))
    if stream.fmt == "rig":  # cameras on a moving body
        out.append(Claim("setup", "eye_in_hand", "format", f"{name} is a camera of a rig folder (eye-in-hand)"))
    stem = Path(stream.path).stem if stream.fmt != "rig" else stream.name
    texts = [(c, "comment", f"{name}: its comment '{c[:60]}'") for c in stream.comments]
    texts.append((stem, "name", f"the name {stem}"))
    for text, source, where in texts:
        fr = frames_in(text) if stream.direction is None else None
        if fr is not None:
            out.append(Claim("frames", fr[0], source, f"{where} says {_frames_text(fr[0])} ({fr[1]})"))
        elif source == "name" and stream.direction is None:
            low = {w.lower() for w in _tokens(text)}
            roles = [r for r, words in _ROLE_WORDS.items() if low & set(words)]
            if len(roles) == 1:  # one role named, no frames: the role alone
                out.append(Claim("role", roles[0], "name", f"{where} names a {roles[0]} file"))
        for setup, pat in _SETUP_WORDS.items():
            if pat.search(text):
                out.append(Claim("setup", setup, source, f"{where} says {setup}"))
        if stream.units is None:
            if _MM.search(text):
                out.append(Claim("units", "mm", source, f"{where} says mm"))
            elif source == "comment" and _M.search(text):
                out.append(Claim("units", "m", source, f"{where} says m"))
    return out


# --------------------------------------------------------------------------- #
# priors
# --------------------------------------------------------------------------- #
def x_log_prior(norm_m) -> np.ndarray:
    """Log-prior of a flange-to-camera (or flange-to-marker) distance [m]: flat from X_MIN_M to X_TYPICAL_M, then
    log-normal, with a Gaussian tail beyond X_TAIL_M (0 at 8 cm, -1.0 at 0.33 m, -9.9 at 0.69 m, -186 at 2.2 m)."""
    x = np.maximum(np.asarray(norm_m, dtype=float), 1e-300)
    far = np.maximum(np.log(x / X_TYPICAL_M), 0.0) / X_LOG_STD
    tail = np.maximum(x - X_TAIL_M, 0.0) / X_FALL_M
    near = np.maximum(np.log10(X_MIN_M / x), 0.0) / 0.5
    return -0.5 * (far ** 2 + tail ** 2 + near ** 2)


def magnitude_log_prior(median_m) -> np.ndarray:
    """Log-prior of a stream's median position magnitude [m] (millimetres read as metres and the reverse)."""
    m = np.maximum(np.asarray(median_m, dtype=float), 1e-300)
    hi = np.maximum(np.log10(m / MAX_PLAUSIBLE_M), 0.0)
    lo = np.maximum(np.log10(MIN_PLAUSIBLE_M / m), 0.0)
    return -0.5 * ((hi + lo) / 0.3) ** 2


def scale_log_prior(s) -> np.ndarray:
    """Log-prior of the ratio of eye to hand translations of a metric eye stream (capped at -60)."""
    s = np.asarray(s, dtype=float)
    v = -0.5 * (np.log(np.where(s > 0, s, 1e-300)) / SCALE_LOG_STD) ** 2
    return np.where(np.isfinite(v) & (s > 0), np.maximum(v, -60.0), -60.0)


def rate_log_likelihood(rate_hz: float | None, role: str) -> float:
    """Log-likelihood (up to a constant shared by the roles) of a stream's rate for a hand or an eye stream."""
    if rate_hz is None or not np.isfinite(rate_hz) or rate_hz <= 0:
        return 0.0
    mu, sd = _RATE_HAND if role == "hand" else _RATE_EYE
    return float(-0.5 * ((np.log(rate_hz) - mu) / sd) ** 2 - np.log(sd))


def median_norm(T) -> float:
    """Median translation magnitude of poses (N, 4, 4) [their units]."""
    return float(np.median(np.linalg.norm(T[:, :3, 3], axis=1)))


def at_own_origin(T) -> bool:
    """Whether some pose (N, 4, 4) puts the camera at the origin of its stream's reference (translation 0 to 1e-9
    of the median's): the reference is then one of the camera's own poses (the start of a visual odometry or SLAM
    trajectory), not a target it observes -- a camera cannot sit at the origin of a target it sees."""
    t = np.linalg.norm(np.asarray(T, dtype=float)[:, :3, 3], axis=1)
    return bool(t.size) and bool(np.any(t <= 1e-9 * float(np.median(t))))


def front_fraction(T_cam_obj) -> float:
    """Share of poses ``T_cam_obj`` (N, 4, 4) that put the object in front of the camera (``z > 0``, any range).

    Direction-specific, unlike :func:`camera_view_fraction`: the object behind
    the camera is impossible for any lens, whatever the target's axes are.
    """
    T = np.asarray(T_cam_obj, dtype=float)
    return float(np.mean(T[:, 2, 3] > 0.0)) if len(T) else 0.0


def camera_view_fraction(T, unit_m: float | None = 1.0) -> float:
    """Share of poses (N, 4, 4) that a camera could have taken of its target, in the better direction of the file.

    A pose read as ``T_cam_target`` complies when the target lies ahead of the
    camera within :data:`VIEW_HALF_ANGLE_DEG` of its optical axis ``z``, at a
    range in :data:`VIEW_RANGE_M` (translations times ``unit_m`` [m per file
    unit]; None: the range is not checked, e.g. a monocular scale), and its
    normal ``z`` (either sign) within :data:`FACING_DEG` of the line of sight.
    The file's inverse is tried too (``T_target_cam``); the larger share is
    returned (the direction is left to the other evidence).
    """
    T = np.asarray(T, dtype=float)
    if len(T) == 0:
        return 0.0
    R, t = T[:, :3, :3], T[:, :3, 3]
    best = 0.0
    for p in (t, -np.einsum("nji,nj->ni", R, t)):  # the target in the camera frame, as read and inverted
        # the target's normal in the camera frame: R z as read, R^T z for the inverse
        n = R[:, :, 2] if p is t else R[:, 2, :]
        r = np.linalg.norm(p, axis=1)
        ok = (p[:, 2] > np.cos(np.radians(VIEW_HALF_ANGLE_DEG)) * r) \
            & (np.abs(np.einsum("ni,ni->n", n, p)) > np.cos(np.radians(FACING_DEG)) * r)
        if unit_m is not None:
            ok &= (r * unit_m >= VIEW_RANGE_M[0]) & (r * unit_m <= VIEW_RANGE_M[1])
        best = max(best, float(ok.mean()))
    return best
