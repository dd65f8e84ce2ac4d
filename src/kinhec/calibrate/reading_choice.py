"""Choosing between readings that fit the same: what is stated, what the files claim, what is physically possible.

The exact symmetries of ``A_i X = Y B_i`` leave some readings of two pose
files fitting exactly as well (:mod:`kinhec.calibrate.readings`):

* **the setup with the eye direction**: eye-in-hand with ``T_target_cam``
  rows and eye-to-hand with ``T_cam_marker`` rows are the same equation, the
  same numbers -- but one publishes the camera on the flange
  (``ee -> cam``), the other the camera fixed beside the robot
  (``base -> cam``);
* **both files inverted**: ``inv(A_i) Y = X inv(B_i)``, ``X`` and ``Y``
  exchanged;
* **the files exchanged**: ``B_i inv(X) = inv(Y) A_i`` (told apart by the
  firewall's rule for roles, :mod:`kinhec.calibrate.firewall`).

The first two make, for one fit, a group of four readings (hand direction x
setup, the eye direction following).  :func:`choose` picks one of them only by,
in this order:

1. **what the user states**: ``--setup``, ``--hand-pose``, and ``--eye-pose``
   together with ``--setup`` (a stated eye direction without a stated setup
   never changes the setup: it must agree with the reading chosen below, or the
   run stops);
2. **what the files claim** (format, comment lines, names): the readings that
   contradict none of it -- when every reading contradicts some claim, the data
   show a claim to be false and the claims decide nothing;
3. **physical impossibility measured on the data**: a camera or marker more
   than :data:`~kinhec.calibrate.conventions.X_IMPOSSIBLE_M` from the flange it
   is mounted on, the target behind the camera in most views
   (:func:`~kinhec.calibrate.conventions.front_fraction`; for a target the
   camera observes, not for the origin of a stream stated monocular, which
   the camera moves past).  A reading the files
   claim that is physically impossible shows the claim to be false: the run
   refuses, naming the readings that are possible.

Never by a prior's likelihood ratio alone and never by a default.  Otherwise it
refuses, listing every reading that fits, what each would publish (its ROS
``static_transform_publisher`` line) and the options that select it.  A stated
option is never overruled to make another reading fit: when what is stated
contradicts what a file claims or is physically impossible, it refuses naming
the reading that fits.

The stage works on plain :class:`Candidate` records and knows nothing of how
they were scored, so it can stand as its own step between reading the
conventions and pairing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Candidate", "Statement", "Choice", "choose"]


@dataclass(frozen=True)
class Candidate:
    """One reading of a group that fits the same.

    Attributes
    ----------
    key : object
        The caller's handle for the reading (returned as chosen).
    setup, hand_pose, eye_pose : str
    options : tuple of str
        The options that select it (``--setup eye_to_hand``, ``--eye-pose cam_T_target``, ...).
    against : tuple of str
        What the files claim that this reading contradicts (format, comments, names), for messages.
    against_weight : float
        The weight of those claims [log units].
    impossible : tuple of str
        What is physically impossible about it, measured on the data (empty: possible).
    summary : str
        ``X`` and ``Y`` in words (``X = T_ee_cam, the camera 18 mm from the flange; ...``).
    publishes : str
        Its ROS ``static_transform_publisher`` line.
    """

    key: object
    setup: str
    hand_pose: str
    eye_pose: str
    options: tuple
    against: tuple = ()
    against_weight: float = 0.0
    impossible: tuple = ()
    summary: str = ""
    publishes: str = ""

    def text(self) -> str:
        return f"{' '.join(self.options)}: {self.summary}; publishes `{self.publishes}`"


@dataclass(frozen=True)
class Statement:
    """What the user stated (None: not stated); a default is not a statement."""

    setup: str | None = None
    hand_pose: str | None = None
    eye_pose: str | None = None

    def words(self) -> str:
        out = [f"--setup {self.setup}"] if self.setup else []
        out += [f"--hand-pose {self.hand_pose}"] if self.hand_pose else []
        out += [f"--eye-pose {self.eye_pose}"] if self.eye_pose else []
        return " ".join(out)


@dataclass
class Choice:
    """The reading chosen (``chosen``) and why (``by``: ``"only"``, ``"statement"``, ``"claims"``, ``"physics"``), or
    ``refusal``: the one-line reason to stop (exit 2)."""

    chosen: Candidate | None
    by: str = ""
    refusal: str | None = None
    notes: list = field(default_factory=list)
    candidates: list = field(default_factory=list)  # every reading of the group, as given


_TOL = 1e-9


def _keeps(c: Candidate, st: Statement) -> bool:
    """The candidate keeps what is stated, the eye direction counted only with a stated setup."""
    if st.setup and c.setup != st.setup:
        return False
    if st.hand_pose and c.hand_pose != st.hand_pose:
        return False
    if st.setup and st.eye_pose and c.eye_pose != st.eye_pose:
        return False
    return True


def _faults(c: Candidate) -> str:
    parts = [f"against {w}" for w in c.against] + list(c.impossible)
    return "; ".join(parts) or "nothing against it"


def _brief(c: Candidate) -> str:
    parts = ([f"against what the files claim ({len(c.against)} claim{'s' if len(c.against) > 1 else ''})"]
             if c.against else []) + list(c.impossible)
    return "; ".join(parts) or "nothing against it"


def choose(candidates: list[Candidate], stated: Statement, files: str) -> Choice:
    """Pick the one reading of ``candidates`` (readings that fit the same) by the rule of the module, or refuse.

    Parameters
    ----------
    candidates : list of Candidate
        The readings of one group (every combination of hand direction and setup that gives the fit).
    stated : Statement
        What the user stated.
    files : str
        The files, for messages (``"a.txt, lines 1-30 and b.txt, lines 1-30"``).

    Returns
    -------
    Choice
        The reading chosen and why, or the refusal; ``candidates`` as given.
    """
    choice = _choose(list(candidates), stated, files)
    choice.candidates = list(candidates)
    return choice


def _choose(candidates: list[Candidate], stated: Statement, files: str) -> Choice:
    pool = list(candidates)
    if len(pool) <= 1:
        return Choice(pool[0] if pool else None, "only")
    # (1) what the user states
    kept = [c for c in pool if _keeps(c, stated)] or pool
    narrowed = len(kept) < len(pool)
    # (2) what the files claim
    least_all = min(c.against_weight for c in pool)
    least = min(c.against_weight for c in kept)
    if narrowed and least > least_all + _TOL:
        fits = [c for c in pool if c.against_weight <= least_all + _TOL]
        fits = [c for c in fits if not c.impossible] or fits
        return Choice(None, refusal=_refuse(stated, kept, fits, files, "contradicts what the files claim"))
    # claims decide only when one reading keeps all of them: when every reading contradicts some claim, the data
    # show that a claim is false (a stale name, say), and weighing one false claim against another is a prior
    claimed = [c for c in kept if c.against_weight <= least + _TOL] if least <= _TOL else kept
    # (3) physical impossibility, measured on the data
    possible = [c for c in claimed if not c.impossible]
    if not possible and narrowed:
        fits = [c for c in pool if not c.impossible and c.against_weight <= least_all + _TOL] or \
            [c for c in pool if not c.impossible]
        if fits:
            return Choice(None, refusal=_refuse(stated, kept, fits, files, "is physically impossible on these files"))
    if not possible and claimed is not kept:
        # what the files claim is impossible on the data (a stale name, say): the claim is false, and nothing
        # else the run may use tells the possible readings apart from it -- refuse, naming them
        fits = [c for c in kept if not c.impossible]
        if fits:
            return Choice(None, refusal=_refuse_claims(claimed, fits, files))
    left = possible or claimed
    if len(left) == 1:
        c = left[0]
        if stated.eye_pose and c.eye_pose != stated.eye_pose:  # stated without a setup: never changes the setup
            same = [x for x in pool if x.eye_pose == stated.eye_pose]
            why = [w for w, bad in (("contradicts what the files claim", any(x.against for x in same)),
                                    ("is physically impossible on these files", all(x.impossible or x.against
                                                                                   for x in same)
                                     and any(x.impossible for x in same))) if bad]
            why = " and ".join(why) + ("; it fits " if why else "fits ") + \
                "only in another setup (or with X and Y exchanged), and an unstated setup is not changed to fit it"
            return Choice(None, refusal=_refuse(stated, same, [c], files, why))
        by = ("only" if len(pool) == 1 else "statement" if len(claimed) == 1 and len(kept) == 1 else
              "claims" if len(claimed) == 1 else "physics")
        notes = []
        if by in ("claims", "physics"):
            others = [x for x in kept if x is not c]
            notes.append(f"conventions: {len(pool)} readings fit these files exactly as well (the same equation read "
                         f"in another setup, or with X and Y exchanged)"
                         + (f"; of the {len(kept)} that keep what is stated," if narrowed else ";")
                         + f" {' '.join(c.options)} is the one "
                         + ("the files claim" if by == "claims" else "physically possible") + ": "
                         + "; ".join(f"{' '.join(x.options)}: {_brief(x)}" for x in others))
        return Choice(c, by, notes=notes)
    items = "; ".join(f"({k + 1}) {c.text()}" for k, c in enumerate(left))
    extra = ""
    if stated.eye_pose and not stated.setup:
        extra = (f"; --eye-pose {stated.eye_pose} alone does not say which (it holds a different pose in each setup): "
                 "state the setup too")
    msg = (f"{files}: {len(left)} readings fit these files exactly as well (the same equation A X = Y B read in "
           f"another setup, or with X and Y exchanged) and nothing stated, claimed by the files or physically "
           f"impossible tells them apart: {items}{extra}; state the one that matches your recording with its options "
           "(a default is not a statement: kinhec does not pick one)")
    return Choice(None, refusal=msg)


def _refuse_claims(claimed: list, fits: list, files: str) -> str:
    faults = "; ".join(f"read as {' '.join(c.options)}: {_faults(c)}" for c in claimed)
    fit = " or ".join(f"({c.text()})" for c in fits)
    select = " or ".join(" ".join(c.options) for c in fits)
    return (f"{files}: what the files claim about themselves is physically impossible on these files ({faults}); "
            f"a claim is false (a file renamed or rewritten?); the reading{'s' if len(fits) > 1 else ''} that fit"
            f"{'' if len(fits) > 1 else 's'}: {fit}; select {'one' if len(fits) > 1 else 'it'} with {select}")


def _refuse(stated: Statement, kept: list, fits: list, files: str, why: str) -> str:
    said = stated.words() or "what is stated"
    faults = "; ".join(f"read as {' '.join(c.options)}: {_faults(c)}" for c in kept)
    fit = " or ".join(f"({c.text()})" for c in fits)
    select = " or ".join(" ".join(c.options) for c in fits)
    return (f"{files}: {said} {why} ({faults}); the reading that fits: {fit}; select it with {select} "
            "(a stated option is never overruled, nor an unstated setup changed to make it fit)")
