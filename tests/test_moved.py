"""The old import paths (:mod:`kinhec.util.moved`): the module itself, with its own spec."""

from __future__ import annotations

import importlib

import pytest

from kinhec.util.moved import MOVED


@pytest.mark.parametrize("old", ["se3", "robots", "benchmark"])
def test_an_old_name_gives_the_module_with_its_own_spec(old):
    module = importlib.import_module(f"kinhec.{old}")
    new = f"kinhec.{MOVED[old]}"
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new and module.__name__ == new
