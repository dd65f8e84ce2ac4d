"""What several test files share, and the support code only the tests use (none of it ships with kinhec).

The tests import these modules as ``helpers.<module>``: pytest puts ``tests/`` on ``sys.path`` (``tests/`` is no
package; see ``conftest.py``), so a fresh clone needs no ``PYTHONPATH``.  Fixtures stay in ``conftest.py``; a module
here holds plain functions and constants, named by what it holds.
"""
