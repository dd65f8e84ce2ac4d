"""Simulation and writing code that the benchmark and docs scripts and the tests share; not shipped with kinhec.

* :mod:`support.bag_writer` writes pose streams into ROS bags (ROS 1, ROS 2 sqlite3, MCAP) for the bag tests,
  ``bench_bags.py`` and the recipe of ``docs/bags.md``;
* :mod:`support.camera_bias` simulates systematic camera errors (a board of another size, intrinsics that are off)
  for ``honest_sigma.py`` and ``tests/test_calibrate_sigma.py``;
* :mod:`support.fidelity_draws` compares several draws of the small tier for ``fidelity_draws.py``, ``fidelity.py``
  and ``tests/test_fidelity.py``;
* :mod:`support.fidelity_composition` compares the index rows of both toolkits' small tiers column by column for
  ``fidelity_composition.py``, ``docs/figures_fidelity.py`` and ``tests/test_fidelity_composition.py``;
* :mod:`support.planner_simulate` draws the measurements of a planned pose set for ``bench_planner.py`` and
  ``tests/test_planner.py``.

A script in ``benchmarks/`` imports them as ``support.<module>`` (Python puts the script's folder on ``sys.path``);
``tests/conftest.py`` and the docs scripts that need them add ``benchmarks/`` to ``sys.path``.
"""
