"""Decoding ``tf2_msgs/TFMessage`` in batches: the transforms of many raw messages as arrays.

A recording's ``/tf`` holds few *kinds* of message: ``robot_state_publisher``
sends the same frames in the same order at every stamp, a detector its own
pair.  Messages of one kind have the same bytes everywhere but in the stamps
and the numbers, so a kind is parsed once (a template: where each stamp and
each block of seven doubles lies, which bytes are the frame names) and every
message of that kind is read at those offsets for all messages at once (numpy
views of the stacked bytes).  Messages that match no template (or a template
that cannot be parsed, e.g. big-endian CDR) are left to the caller's generic
decoder.

Layouts (little-endian):

* ROS 1: ``uint32 n``, then per transform ``uint32 seq, uint32 sec, uint32
  nsec, uint32 len, frame_id, uint32 len, child_frame_id, float64 x 7``, no
  alignment; ``seq`` differs between messages and is skipped.
* ROS 2 CDR: a 4-byte encapsulation header (``00 01 00 00``: CDR little
  endian), then the same fields without ``seq``, strings counted with their
  terminating NUL, each field aligned to its size relative to the end of the
  header.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

__all__ = ["Template", "parse_template", "decode_batch"]

_U32 = struct.Struct("<I")
#: Largest number of templates tried per message length before the rest go to the generic decoder.
MAX_TEMPLATES = 64


@dataclass
class Template:
    """Where the fields of one kind of message lie (byte offsets into the raw message)."""

    length: int
    parents: list
    children: list
    sec: np.ndarray  # (K,) offsets of the stamps' seconds
    nsec: np.ndarray  # (K,)
    doubles: np.ndarray  # (K,) offsets of x, y, z, qx, qy, qz, qw
    fixed: np.ndarray  # (length,) bool: bytes every message of this kind shares
    signed_sec: bool


def parse_template(raw: bytes, ros1: bool) -> Template | None:
    """The template of one raw ``TFMessage``, or None when it is not a layout read here."""
    try:
        if ros1:
            base, pos = 0, 0
        else:
            if raw[:2] != b"\x00\x01":  # CDR little endian only
                return None
            base, pos = 4, 0
        data = memoryview(raw)[base:]
        (n,) = _U32.unpack_from(data, pos)
        pos += 4
        parents, children, sec, nsec, dbl = [], [], [], [], []
        varying = []
        for _ in range(n):
            if ros1:
                varying.append((pos, 4))  # seq
                pos += 4
            else:
                pos += -pos % 4
            sec.append(pos)
            nsec.append(pos + 4)
            pos += 8
            for out in (parents, children):
                if not ros1:
                    pos += -pos % 4
                (length,) = _U32.unpack_from(data, pos)
                pos += 4
                text = bytes(data[pos:pos + length])
                out.append((text[:-1] if not ros1 and text.endswith(b"\x00") else text).decode())
                pos += length
            if not ros1:
                pos += -pos % 8
            dbl.append(pos)
            pos += 56
        if pos > len(data) or len(data) - pos >= 8:
            return None
    except (struct.error, UnicodeDecodeError, IndexError):
        return None
    fixed = np.ones(len(raw), dtype=bool)
    for p in sec:
        fixed[base + p: base + p + 8] = False
    for p in dbl:
        fixed[base + p: base + p + 56] = False
    for p, w in varying:
        fixed[base + p: base + p + w] = False
    return Template(len(raw), parents, children, np.array(sec) + base, np.array(nsec) + base, np.array(dbl) + base,
                    fixed, signed_sec=not ros1)


def _column(block: np.ndarray, offsets: np.ndarray, width: int, dtype: str) -> np.ndarray:
    """``(rows, K)`` values of ``dtype`` at byte ``offsets`` of every row of ``block`` (``width`` bytes each)."""
    idx = offsets[:, None] + np.arange(width)[None, :]
    return np.ascontiguousarray(block[:, idx]).view(dtype)[..., 0]


def decode_batch(raws: list, ros1: bool):
    """The transforms of many raw ``TFMessage`` at once.

    Parameters
    ----------
    raws : list of bytes
        Raw messages (one connection's serialization: ROS 1 or CDR).
    ros1 : bool

    Returns
    -------
    dict
        ``msg`` (int, (M,)) index into ``raws`` of each transform, ``k``
        (int, (M,)) its place in the message, ``parent``, ``child`` (lists of
        str, M), ``t_ns`` (int64, (M,)), ``p`` ((M, 3)), ``q_xyzw`` ((M, 4));
        and ``rest``: indices of the messages left to the generic decoder.
    """
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
    parts = []
    rest = []
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        block = np.frombuffer(b"".join(raws[i] for i in rows), dtype=np.uint8).reshape(rows.size, int(length))
        todo = np.ones(rows.size, dtype=bool)
        for _ in range(MAX_TEMPLATES):
            if not todo.any():
                break
            first = int(np.argmax(todo))
            tpl = parse_template(raws[rows[first]], ros1)
            if tpl is None:
                rest.append(int(rows[first]))
                todo[first] = False
                continue
            match = todo & (block[:, tpl.fixed] == block[first, tpl.fixed]).all(axis=1)
            todo &= ~match
            sub = block[match]
            K = len(tpl.parents)
            if K == 0:
                continue
            sec = _column(sub, tpl.sec, 4, "<i4" if tpl.signed_sec else "<u4").astype(np.int64)
            nsec = _column(sub, tpl.nsec, 4, "<u4").astype(np.int64)
            idx = tpl.doubles[:, None] + np.arange(56)[None, :]
            vals = np.ascontiguousarray(sub[:, idx]).view("<f8")  # (rows, K, 7)
            m = int(match.sum())
            parts.append({
                "msg": np.repeat(rows[match], K), "k": np.tile(np.arange(K), m),
                "parent": tpl.parents * m, "child": tpl.children * m,
                "t_ns": (sec * 1_000_000_000 + nsec).reshape(-1), "v": vals.reshape(-1, 7),
            })  # fmt: skip
        rest += rows[todo].tolist()
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return {"msg": empty, "k": empty, "parent": [], "child": [], "t_ns": empty, "p": np.zeros((0, 3)),
                "q_xyzw": np.zeros((0, 4)), "rest": sorted(rest)}
    msg = np.concatenate([d["msg"] for d in parts])
    k = np.concatenate([d["k"] for d in parts])
    order = np.lexsort((k, msg))  # bag order, then order in the message
    parent = [x for d in parts for x in d["parent"]]
    child = [x for d in parts for x in d["child"]]
    v = np.concatenate([d["v"] for d in parts])[order]
    return {"msg": msg[order], "k": k[order], "parent": [parent[i] for i in order],
            "child": [child[i] for i in order], "t_ns": np.concatenate([d["t_ns"] for d in parts])[order],
            "p": v[:, :3], "q_xyzw": v[:, 3:], "rest": sorted(rest)}
