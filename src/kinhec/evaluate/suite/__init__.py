"""The regression suite: frozen observations, reference results, drift and accuracy checks.

A suite folder (``regression/`` in the repository) holds ``suite.toml`` (the
entries), ``SHA256SUMS`` (checksums of the frozen files, in the format of
``sha256sum -c``), ``observations/<id>.json``, ``truth/<id>.json`` (synthetic
entries), ``results/<id>/kinhec.json`` (the reference result),
``results/<id>/opencv.json`` (OpenCV's result on the same observations) and
``schema/``.  See ``docs/regression.md``.

* :mod:`kinhec.evaluate.suite.manifest` reads ``suite.toml`` and ``SHA256SUMS``;
* :mod:`kinhec.evaluate.suite.problems` maps a problem name to the function that solves an entry;
* :mod:`kinhec.evaluate.suite.checks` compares results (drift, sigma, truth);
* :mod:`kinhec.evaluate.suite.runner` runs ``check``, ``bless`` and ``freeze``;
* :mod:`kinhec.evaluate.suite.compare` sets kinhec's results against OpenCV's;
* :mod:`kinhec.evaluate.suite.opencv` is the OpenCV harness (needs the ``dev`` extra).
"""

from kinhec.evaluate.suite.manifest import Entry, Suite, load_suite
from kinhec.evaluate.suite.runner import EntryReport, bless, check, freeze

__all__ = ["Entry", "Suite", "load_suite", "EntryReport", "check", "bless", "freeze"]
