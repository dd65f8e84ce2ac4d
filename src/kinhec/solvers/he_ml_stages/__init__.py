"""The stages of the maximum-likelihood solver :func:`kinhec.solvers.he_ml.he_ml`, one module each.

The public entry point is :mod:`kinhec.solvers.he_ml` (the function, its result
and its constants); the method is described there.  Here every stage has its
file, in the order ``he_ml`` runs them:

* :mod:`.inputs` -- checks of the arguments (noise levels, pixels);
* :mod:`.model` -- the pose model's glue: predicted camera poses, residuals with
  a monocular scale, the SE(3) step of a fit;
* :mod:`.configuration` -- eye-in-hand or eye-to-hand, the planar-ambiguity
  mirrors (step 1);
* :mod:`.hypotheses` -- the robust start: closed-form and minimal-set hypotheses
  and their scores, the first inliers (step 2);
* :mod:`.variance_components` -- the per-pair covariance as a sum of variance
  components and their estimation (restricted likelihood);
* :mod:`.reweighting` -- the iteratively reweighted maximum likelihood: the
  weighted least-squares solve, the chi-square gate, mirror repair, Student-t
  weights, the constant scale (steps 3 and 4);
* :mod:`.scale_drift` -- a monocular scale that drifts as a random walk (step 4);
* :mod:`.camera_drift` -- a camera error that is a random walk: ``X`` from the
  motions (step 5);
* :mod:`.covariance` -- the covariance of the estimate (step 6);
* :mod:`.collapse` -- the check of the final state: a minority of inliers that determines no ``X`` is refused;
* :mod:`.pixels` -- the last stage on the target's pixels (step 7);
* :mod:`.points` -- its counterpart for a depth camera's 3D points (``X`` and ``Y`` from the points, started
  from the pose solution; ``kinhec calibrate --points``).

:class:`~.state.FitState` carries the fit from stage to stage.  Nothing is
imported here, so that importing one stage does not import the others.
"""
