"""JSON in and out, the same way everywhere in kinhec.

Every JSON text kinhec writes (the ``config_json`` / ``extra_json`` index
columns, the shard metadata, reports, ``generation_info.json``) goes through
:func:`dumps`, which

* writes NaN and +-inf as ``null`` (standard JSON has no NaN; a bare ``NaN``
  token breaks most non-Python readers),
* converts numpy scalars and arrays (``np.float32(1.5)`` -> ``1.5``,
  ``np.arange(3)`` -> ``[0, 1, 2]``), tuples and sets to plain JSON values,
* turns ``pathlib.Path`` into a string and ``datetime`` / ``date`` into ISO 8601,
* refuses anything else with an :class:`~kinhec.util.errors.InputError` naming the
  place in the object (``obj["a"][3]``) and the offending type.

:func:`loads` is the counterpart; it also accepts the non-standard
``NaN`` / ``Infinity`` tokens other writers may have produced.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path, PurePath

import numpy as np

from kinhec.util.errors import InputError
from kinhec.util.fsutil import atomic_write_text

__all__ = ["to_jsonable", "dumps", "loads", "dump", "load"]


def _float(x: float):
    return x if math.isfinite(x) else None


def to_jsonable(obj, _where: str = "obj"):
    """Return ``obj`` converted to plain JSON values (dict, list, str, int, float, bool, None).

    Non-finite floats become ``None``.  Dict keys must be strings, numbers or
    booleans (numbers are written as strings, as JSON requires).

    Raises
    ------
    InputError
        For a value of a type JSON cannot represent.
    """
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, int):  # also catches bool above; plain Python int
        return obj
    if isinstance(obj, float):
        return _float(obj)
    if isinstance(obj, np.generic):
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return _float(float(obj))
        if isinstance(obj, np.str_):
            return str(obj)
        raise InputError(f"{_where}: expected a JSON-representable value, got numpy {type(obj).__name__}")
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "c":
            raise InputError(f"{_where}: expected a real array, got dtype {obj.dtype}")
        if obj.dtype.kind == "f":
            # one vectorised pass: non-finite -> None, then nested lists
            arr = obj.astype(np.float64).astype(object)
            arr[~np.isfinite(obj)] = None
            return arr.tolist()
        if obj.dtype.kind in "biuU":
            return obj.tolist()
        return [to_jsonable(v, f"{_where}[{i}]") for i, v in enumerate(obj.tolist())]
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if isinstance(k, (str, np.str_)):
                key = str(k)
            elif isinstance(k, (bool, np.bool_, int, np.integer, float, np.floating)):
                key = str(to_jsonable(k, _where))
            else:
                raise InputError(f"{_where}: expected string or number dict keys, got {type(k).__name__} key {k!r}")
            out[key] = to_jsonable(v, f"{_where}[{key!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        if all(type(v) is str or type(v) is int or (type(v) is float and math.isfinite(v)) for v in obj):
            return list(obj)  # plain values (the common case: no per-item call or path string)
        return [to_jsonable(v, f"{_where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, (set, frozenset)):
        items = [to_jsonable(v, f"{_where}{{...}}") for v in obj]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(obj, PurePath):
        return obj.as_posix()
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    raise InputError(f"{_where}: expected a JSON-representable value, got {type(obj).__name__}")


def dumps(obj, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """Serialise ``obj`` to a JSON string; NaN and inf are written as ``null``.

    Parameters
    ----------
    obj : object
        Nested dicts / lists / tuples of str, int, float, bool, None, numpy
        scalars and arrays, paths and dates.
    indent : int, optional
        Pretty-print with this indentation (compact one-line output by default).
    sort_keys : bool
        Sort dict keys.

    Returns
    -------
    str
        Standard JSON (never contains ``NaN`` or ``Infinity`` tokens).
    """
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(
        to_jsonable(obj), allow_nan=False, indent=indent, sort_keys=sort_keys, separators=separators, ensure_ascii=False
    )


def loads(text):
    """Parse a JSON text (``str`` or ``bytes``).

    Raises
    ------
    InputError
        If ``text`` is not valid JSON (the message gives line and column).
    """
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    if not isinstance(text, str):
        raise InputError(f"text: expected a JSON string or bytes, got {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"text: expected valid JSON, got an error at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def dump(obj, path, *, indent: int | None = 2, sort_keys: bool = False) -> Path:
    """Write ``dumps(obj)`` to ``path`` atomically (temporary file, fsync, rename); returns the path."""
    return atomic_write_text(path, dumps(obj, indent=indent, sort_keys=sort_keys) + "\n")


def load(path):
    """Read and parse the JSON file ``path``.

    Raises
    ------
    InputError
        If the file does not exist or is not valid JSON (the message names the file).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"path: expected an existing JSON file, got missing file {str(path)!r}") from None
    try:
        return loads(text)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
