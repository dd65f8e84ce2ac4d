"""What this pytest process collected (filled by the collection hook of ``tests/conftest.py``)."""

from __future__ import annotations

#: Node ids of every test this process collected, before ``-k`` / ``-m`` deselect any, and the paths it was asked
#: to collect: the README states how many tests there are, and tests/test_doc_outputs.py checks it when the whole
#: suite is collected.
COLLECTED: list[str] = []
COLLECTED_ARGS: list[str] = []
