"""Checks the calibrate tests share: an estimate within its reported sigmas, a command that fails in one line."""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3


def right_error(T_est, T_true):
    """Error of ``T_est`` in the parametrisation of the reported std: rotation in its frame, translation."""
    return np.concatenate([se3.so3_log(T_est[:3, :3].T @ T_true[:3, :3]), T_true[:3, 3] - T_est[:3, 3]])


def within_3_sigma(T_est, T_true, std, k=3.0):
    z = np.abs(right_error(T_est, T_true)) / std
    assert z.max() < k, z
    return z


def one_line_exit_2(r, *fragments):
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert "\n" not in err and "Traceback" not in r.output + r.stderr, err
    for f in fragments:
        assert f in err, (f, err)
    return err


def one_line_error_naming(read, path, expected):
    """``read(path)`` raises an InputError of one line that starts with the path and holds ``expected``."""
    import pytest

    from kinhec.util.errors import InputError

    with pytest.raises(InputError) as exc:
        read(path)
    msg = str(exc.value)
    assert msg.startswith(str(path)) and expected in msg and "\n" not in msg
