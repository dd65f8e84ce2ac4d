"""The stages of :func:`kinhec.calibrate.calibrate` after its options and inputs, each with its own result.

One camera (:func:`~kinhec.calibrate.stages.camera.solve_camera`): :mod:`.conventions` (the firewall's
reading applied), :mod:`.pairing`, :mod:`.solve`, :mod:`.uncertainty`, :mod:`.verdict`, :mod:`.outputs`;
a rig (:mod:`.rig`): every camera so, then all jointly.
"""
