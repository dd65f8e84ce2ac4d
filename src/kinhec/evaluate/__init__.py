"""Judging solvers: the benchmark, Cramér-Rao bounds, fidelity to the published tiers, the regression suite."""
