"""Physical models: robot arms (``robots``), cameras and targets (``cameras``), intrinsics, PnP, noise."""
