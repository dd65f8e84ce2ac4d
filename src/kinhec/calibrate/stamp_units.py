"""The unit of each stream's time stamps (s, ms, µs, ns), and an offset found at the edge of its search.

Pose files store their stamps as bare numbers.  The formats kinhec reads say
seconds (TUM, ETH-ASL, a CSV column ``t``/``t_s``), but files written by
other tools carry milliseconds, microseconds or ROS-style nanoseconds since
the epoch just as often, and read as seconds they pass every check: a 50 Hz
robot stamped in milliseconds reads as a 0.05 Hz stream of 15.6 hours, the
clock offset (16 ms in truth) is searched over +-0.5 ms, and the pairs come
out at the wrong instants.

What is physically plausible, and why (:data:`RATE_HZ`, :data:`DURATION_S`):

* **Rate.**  Robot controllers report their flange pose at 10-1000 Hz (UR 125
  / 500 Hz, KUKA RSI 250 Hz-1 kHz, Franka 1 kHz), motion capture at 50-2000
  Hz, cameras at 1-120 Hz (a few more for high-speed ones); a stream logged
  at a few stations has a slower median rate, down to one sample every few
  seconds.  A median rate between 0.2 Hz and 5 kHz is plausible for either
  role; a pose stream at 0.05 Hz (one sample every 20 s) or at 50 kHz is not.
* **Duration.**  A hand-eye recording lasts from about a second (a short
  sweep) to a few hours (a long station run); 1 s to 12 h is plausible,
  15 hours of a 50 Hz robot or 650 days are not.
* **Consistency.**  The two streams record the same motion: converted to
  seconds, their spans overlap by at least half of the shorter one, and the
  longer lasts at most :data:`MAX_SPAN_RATIO` times the shorter.  Stamps since
  the epoch in different units (ns against s) overlap in one unit pair only.

Each unit multiplies the rate by 1000 and divides the duration by 1000, so
for most streams one unit at most is plausible; for the others (a 0.2-5 Hz
stream over 17 minutes to 12 hours: rate and duration ambiguous by a factor
of 1000) the other stream and the consistency decide.

The rule (:func:`settle`):

1. A stated unit (``stamp_unit``, one for both files or ``HAND,EYE``) is used
   and never overruled; a file's own (a CSV time column named ``t_ns`` or
   ``timestamp [ms]``: :func:`header_unit`) counts as stated unless the user
   states another (noted).  When a stated unit makes its stream implausible,
   the run stops naming the file, the rate and duration it implies and the
   unit that fits.
2. Unstated, the stamps are read in seconds (what the formats say).  When the
   seconds make a stream implausible or the streams inconsistent and exactly
   one unit pair makes both plausible and consistent, that pair is used with
   a note naming the file, the unit read, the unit used and why.  When two or
   more unit pairs fit, the run stops listing them; nothing is chosen by
   default.  When none fits, the stamps stay as read (the formats' claim):
   the checks downstream (the overlap of the streams, the offset search) judge
   them.
3. The offset curve is the last check: an offset whose angular-speed
   correlation (or pose-fit scan) peaks at the edge of the searched range, or
   whose refined value ends there, is refused (:func:`check_offset_edge`):
   the true offset may lie beyond, and stamps in another unit shift it there.
"""

from __future__ import annotations


import numpy as np

from kinhec.calibrate.readers import PoseStream, header_unit
from kinhec.util.errors import InputError, UnknownNameError

__all__ = ["STAMP_UNITS", "SECONDS_PER_UNIT", "header_unit", "RATE_HZ", "DURATION_S", "MAX_SPAN_RATIO", "stamp_unit_pair",
           "plausible", "settle", "settle_streams", "check_offset_edge", "offset_at_edge"]

#: The stamp units kinhec reads, and their length in seconds.
SECONDS_PER_UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
STAMP_UNITS = tuple(SECONDS_PER_UNIT)
#: Plausible median sample rate of a pose stream [Hz], robot, motion capture or camera (module docstring).
RATE_HZ = (0.2, 5000.0)
#: Plausible duration of a recording [s].
DURATION_S = (1.0, 12 * 3600.0)
#: The longer stream's span over the shorter's, at most, for two streams of one recording.
MAX_SPAN_RATIO = 30.0
#: Formats whose stamps are known in seconds (a bag's header stamps, a kinhec dataset): never judged.
_KNOWN_SECONDS = ("bag", "kinhec")


def stamp_unit_pair(value) -> tuple[str | None, str | None]:
    """``stamp_unit`` given once or per file (``"ms"`` or ``"ns,s"``) as ``(hand, eye)``; ``(None, None)`` unstated."""
    if value is None:
        return None, None
    parts = [u.strip() for u in str(value).split(",")]
    for u in parts:
        if u not in SECONDS_PER_UNIT:
            raise UnknownNameError("stamp unit", u, STAMP_UNITS)
    if len(parts) in (1, 2):
        return parts[0], parts[-1]
    raise InputError(f"stamp unit: expected one of {', '.join(STAMP_UNITS)} or HAND,EYE (e.g. ns,s), got {value!r}")


def _stats(t: np.ndarray) -> tuple[float, float]:
    """Median step and span of the stamps as read [file units]."""
    return float(np.median(np.diff(t))), float(t[-1] - t[0])


def plausible(t: np.ndarray, unit: str) -> tuple[bool, float, float]:
    """Whether stamps ``t`` (as read) in ``unit`` give a plausible stream; also its rate [Hz] and duration [s]."""
    step, span = _stats(t)
    f = SECONDS_PER_UNIT[unit]
    rate = 1.0 / (step * f) if step > 0 else float("inf")
    dur = span * f
    ok = RATE_HZ[0] <= rate <= RATE_HZ[1] and DURATION_S[0] <= dur <= DURATION_S[1]
    return ok, rate, dur


def _consistent(th: np.ndarray, fh: float, te: np.ndarray, fe: float) -> bool:
    a0, a1 = th[0] * fh, th[-1] * fh
    b0, b1 = te[0] * fe, te[-1] * fe
    short, long_ = sorted((a1 - a0, b1 - b0))
    if short <= 0 or long_ > MAX_SPAN_RATIO * short:
        return False
    return min(a1, b1) - max(a0, b0) >= 0.5 * short


def _describe(path: str, rate: float, dur: float, unit: str) -> str:
    return f"{path} in {unit}: {_hz(rate)} over {_dur(dur)}"


def _hz(rate: float) -> str:
    if rate >= 1e3:
        return f"{rate / 1e3:.3g} kHz"
    return f"{rate:.3g} Hz"


def _dur(d: float) -> str:
    if d >= 2 * 365 * 86400:
        return f"{d / (365.25 * 86400):.3g} years"
    if d >= 2 * 86400:
        return f"{d / 86400:.3g} days"
    if d >= 2 * 3600:
        return f"{d / 3600:.3g} h"
    if d >= 120:
        return f"{d / 60:.3g} min"
    return f"{d:.3g} s"


def _why(ok: bool, rate: float, dur: float) -> str:
    if ok:
        return "plausible"
    bad = []
    if not RATE_HZ[0] <= rate <= RATE_HZ[1]:
        bad.append(f"a pose stream reports at {RATE_HZ[0]:g} Hz to {RATE_HZ[1] / 1e3:g} kHz")
    if not DURATION_S[0] <= dur <= DURATION_S[1]:
        bad.append(f"a recording lasts {DURATION_S[0]:g} s to {DURATION_S[1] / 3600:g} h")
    return "; ".join(bad)


def _rescaled(stream, unit: str, notes: list):
    """A copy of ``stream`` with its stamps in seconds (``unit`` as read), and ``notes`` added."""
    out = PoseStream(**{f: getattr(stream, f) for f in stream.__dataclass_fields__})
    out.t = stream.t * SECONDS_PER_UNIT[unit]
    out.notes = list(stream.notes) + list(notes)
    out.stamp_unit = "s"
    return out


def settle_streams(hand, eyes: list, stated=None, *, force: bool = False):
    """:func:`settle` for a hand stream and every eye stream (a rig): the hand's unit is the first pair's."""
    if hand is None or not eyes:
        return hand, eyes
    su = stated if isinstance(stated, tuple) else stamp_unit_pair(stated)
    out = []
    hand_unit = None
    h_first = hand
    for k, e in enumerate(eyes):
        h2, e2, units = _settle(hand, e, su, hand_unit, force=force)
        if k == 0:
            h_first, hand_unit = h2, units[0]
        out.append(e2)
    return h_first, out


def settle(hand, eye, stated=None, *, force: bool = False):
    """The stamp unit of each of two stamped streams; ``(hand, eye)`` with their stamps in seconds.

    Parameters
    ----------
    hand, eye : PoseStream
        The streams as read (stamps in the file's numbers).
    stated : str or (str or None, str or None), optional
        The user's unit, one for both files or ``(hand, eye)`` (``"ms"``,
        ``"ns,s"``); None: unstated (read as seconds unless implausible).
    force : bool
        Keep a stated implausible unit, or the units as read (or stated) when
        several fit, with a note, instead of raising.

    Returns
    -------
    hand, eye : PoseStream
        The same streams (unchanged when the stamps are in seconds), or copies
        with their stamps converted and a note saying why.

    Raises
    ------
    InputError
        A stated unit that makes its stream implausible (naming the file, the
        rate and duration it implies and the unit that fits), or two or more
        unit pairs that fit equally (naming them).
    """
    h, e, _ = _settle(hand, eye, stated if isinstance(stated, tuple) else stamp_unit_pair(stated), force=force)
    return h, e


def _settle(hand, eye, su, hand_fixed: str | None = None, *, force: bool = False):
    """:func:`settle` on ``su = (hand unit, eye unit)`` (None: unstated); also the units used.

    ``hand_fixed``: the hand's unit as settled with another eye stream (a rig).
    """
    if hand.t is None or eye.t is None:
        if su != (None, None):
            which = hand if hand.t is None else eye
            raise InputError(f"{which.path}: --stamp-unit applies to time stamps, got a file without them")
        return hand, eye, (None, None)
    known = [s for s in (hand, eye) if s.fmt in _KNOWN_SECONDS]
    if known and su != (None, None):
        raise InputError(f"{known[0].path}: its stamps are in seconds ({known[0].fmt}), got --stamp-unit "
                         f"{su[0] if su[0] == su[1] else f'{su[0]},{su[1]}'}")
    if len(hand.t) < 2 or len(eye.t) < 2 or known:
        return hand, eye, ("s", "s")
    streams = (hand, eye)
    user = su
    # what each file states (a CSV time column named t_ns, timestamp [ms]) counts unless the user says otherwise
    su = tuple(user[k] or s.stamp_unit for k, s in enumerate(streams))
    said = [f"--stamp-unit {user[k]}" if user[k] else f"its time column's name ({s.stamp_unit})"
            for k, s in enumerate(streams)]
    overridden = {k: f"{s.path}: its time column's name says {s.stamp_unit}; --stamp-unit {user[k]} used"
                  for k, s in enumerate(streams) if user[k] and s.stamp_unit and s.stamp_unit != user[k]}
    judged = [{u: plausible(s.t, u) for u in STAMP_UNITS} for s in streams]
    bad = [k for k, u in enumerate(su) if u is not None and not judged[k][u][0]]
    if bad:  # a stated unit is used, never overruled: one that makes its stream implausible stops the run
        k = bad[0]
        s, u = streams[k], su[k]
        ok, rate, dur = judged[k][u]
        every = _fitting(hand, eye, judged, STAMP_UNITS, STAMP_UNITS)
        if len(every) == 1:
            uh, ue = every[0]
            fix = (f"the stamps fit in {every[0][k]} ({_hz(judged[k][every[0][k]][1])} over "
                   f"{_dur(judged[k][every[0][k]][2])}) with the other file's in {every[0][1 - k]}: "
                   f"--stamp-unit {uh if uh == ue else f'{uh},{ue}'}")
        elif every:
            fix = f"the stamps fit {len(every)} unit pairs ({', '.join(f'{a},{b}' for a, b in every)}): state which"
        else:
            fits = [v for v in STAMP_UNITS if judged[k][v][0]]
            fix = (f"in {' or '.join(fits)} this file alone would be plausible, but then the two files do not "
                   "overlap in time: check both time columns" if fits else
                   "no stamp unit gives a plausible stream: check the file's time column")
        msg = (f"{s.span()}: {said[k]} implies {_hz(rate)} over {_dur(dur)} for this file, not a plausible pose "
               f"stream ({_why(ok, rate, dur)}); {fix}")
        if not force:
            raise InputError(msg)
        overridden[k] = msg + "; kept (--force)"
    hand_units = (hand_fixed or su[0],) if hand_fixed or su[0] else STAMP_UNITS
    combos = [(uh, ue) for uh in hand_units for ue in ((su[1],) if su[1] else STAMP_UNITS)]
    fit = _fitting(hand, eye, judged, *zip(*combos)) if combos else []
    fit = [c for c in fit if c in combos]
    read = (hand_fixed or su[0] or "s", su[1] or "s")
    if len(fit) > 1 and not (force and read in fit):
        listed = "; ".join(f"{uh},{ue} ({_describe(hand.path, *judged[0][uh][1:], uh)}, "
                           f"{_describe(eye.path, *judged[1][ue][1:], ue)})" for uh, ue in fit)
        raise InputError(f"{hand.span()} and {eye.span()}: the time stamps fit {len(fit)} units equally: {listed}; "
                         "nothing tells them apart: state the unit with --stamp-unit UNIT or --stamp-unit HAND,EYE")
    # one pair fits (used), or none (the stamps stay as read -- stated, or the formats' seconds; later checks judge)
    used = fit[0] if len(fit) == 1 else read
    if len(fit) > 1:  # forced
        overridden[0] = (f"{hand.path} and {eye.path}: the time stamps fit {len(fit)} unit pairs equally "
                         f"({', '.join(f'{a},{b}' for a, b in fit)}); kept in {used[0]},{used[1]} (--force)")
    out = []
    for k, (s, u_read, u_used) in enumerate(zip(streams, read, used)):
        notes = [overridden[k]] if k in overridden else []
        if u_used != u_read:
            ok_r, rate_r, dur_r = judged[k][u_read]
            _, rate_u, dur_u = judged[k][u_used]
            why = (_why(ok_r, rate_r, dur_r) if not ok_r else
                   f"the other file's stamps ({streams[1 - k].path}) are in {used[1 - k]} and the two recordings "
                   "overlap only so")
            notes.append(f"{s.path}: time stamps read in {u_used}, not {u_read}: in {u_read} they give {_hz(rate_r)} "
                         f"over {_dur(dur_r)} ({why}), in {u_used} {_hz(rate_u)} over {_dur(dur_u)}, the only unit "
                         "that makes both files plausible and their spans overlap (--stamp-unit to state it)")
        out.append(s if u_used == "s" and not notes else _rescaled(s, u_used, notes))
    return out[0], out[1], used


def _fitting(hand, eye, judged, units_hand, units_eye) -> list:
    """The unit pairs (of ``units_hand`` x ``units_eye``) that make both streams plausible and consistent."""
    return [(uh, ue) for uh in dict.fromkeys(units_hand) for ue in dict.fromkeys(units_eye)
            if judged[0][uh][0] and judged[1][ue][0]
            and _consistent(hand.t, SECONDS_PER_UNIT[uh], eye.t, SECONDS_PER_UNIT[ue])]


def offset_at_edge(offset_s: float, max_offset_s: float, period_s: float) -> bool:
    """Whether a refined offset lies at (or beyond) the edge of ``+-max_offset_s``.

    Within one sample period of it, or a tenth of the range for streams slower than that.
    """
    return abs(offset_s) >= max_offset_s - min(max(period_s, 0.0), 0.1 * max_offset_s)


def check_offset_edge(hand, eye, offset_s: float, max_offset_s: float, *, coarse: bool, force: bool,
                      warnings: list) -> bool:
    """Refuse an offset at the edge of its search (``InputError``); with ``force``, a warning first in ``warnings``.

    ``coarse``: the coarse estimate (the angular-speed correlation or the
    pose-fit scan) peaked at the edge; otherwise ``offset_s`` is the refined
    offset.  Returns True when the offset is at the edge (``force`` given).
    """
    what = "the coarse estimate (angular-speed correlation or pose-fit scan) peaks" if coarse else "the refined offset ends"
    msg = (f"{hand.span()} and {eye.span()}: the clock offset is not determined: {what} at {1000 * offset_s:+.1f} ms, "
           f"the edge of the searched +-{max_offset_s:g} s, so the true offset may lie beyond it; widen the search "
           f"(--max-offset SECONDS), give the offset (--offset SECONDS), or check the time stamps' unit (--stamp-unit: "
           f"{hand.path} runs at {_hz(hand.rate_hz or 0)}, {eye.path} at {_hz(eye.rate_hz or 0)} as read)")
    if not force:
        raise InputError(msg)
    warnings.insert(0, msg.split(": ", 1)[1] + "; kept (--force)")
    return True
