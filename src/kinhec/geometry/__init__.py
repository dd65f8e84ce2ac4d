"""Rigid-body maths: SE(3) and SO(3) (``se3``), least squares (``lsq``), motions and keyframes (``motion``)."""
