"""The generator: tiers, recipes, trajectories, one sequence (``generator``), a dataset (``runner``), scenes, observations."""
