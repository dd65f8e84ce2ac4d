"""Multi-sensor scenes with ground truth: ``K`` cameras, ``M`` targets, a visibility graph, pose pairs per edge.

The generalised problem ``A_k X_i(k) = Y_j(k) B_k`` (:mod:`kinhec.solvers.multi_axyb`) in two set-ups:

``eye_to_hand``
    Fixed cameras watching tags on a robot: ``X_i = T_ee_tag_i`` (one per tag, ids ``tag00``, ...),
    ``Y_j = T_base_cam_j`` (one per camera, ``cam00``, ...), ``A_k = T_base_ee``, ``B_k = T_cam_tag``.
``eye_in_hand``
    Cameras on one body watching targets fixed in the world: ``X_i = T_body_cam_i`` (``cam00``, ...),
    ``Y_j = T_world_target_j`` (``target00``, ...), ``A_k = T_world_body``, ``B_k = T_target_cam``.

Geometry.  The cameras of an eye-to-hand scene stand on a sphere of radius 1.2-2 m around the workspace
centre and look at it; the tags sit within 0.15 m of the flange, turned at random.  The cameras of an
eye-in-hand rig sit within 0.25 m of the body origin, the targets within 1.5 m of the world origin.  Each
pair is a *view*: the target at 0.4-1.5 m from the camera, within 20 deg of the optical axis, its normal
within 45 deg of the line of sight (facing the camera) and any in-plane rotation; the hand pose follows from
the chain (eye-to-hand ``A = Y C inv(X)``, eye-in-hand ``A = Y inv(C) inv(X)``, ``C = T_cam_target``), so
every pair is seen and every edge is well conditioned whatever its number of pairs.

Visibility graph.  ``dense``: every camera sees every target; ``sparse``: a random spanning tree of the
bipartite graph plus each further edge with probability 0.2; ``tree``: the spanning tree alone.  The pairs
are spread over the edges (at least ``min_pairs_per_edge`` each, the rest at random).

Noise (the models of :mod:`kinhec.models.noise`).  Camera ``se3_gaussian`` on ``C`` (target-frame rotation,
camera-frame anisotropic translation), robot ``se3_gaussian`` on ``A`` (flange-frame twist), both
optionally Student-t; a monocular scale per camera (:func:`kinhec.models.noise.apply_scale`, no drift); outliers
(:func:`kinhec.models.noise.apply_outliers`).  Each pair draws its own robot error (the robot takes a new pose for
every view), so pairs are independent, as the solver and the bound model them.

Randomness.  Everything is drawn from ``numpy.random.SeedSequence([seed, scene_id])``, with separate
children for the geometry, the pair counts, the camera and robot noise, the scale and the outliers: the same
``(seed, scene_id)`` and arguments always give the same scene, and changing a noise level leaves the
geometry untouched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kinhec.models import noise as nz
from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError

__all__ = ["GRAPHS", "CONFIGURATIONS", "MultiScene", "draw_scene"]

GRAPHS = ("dense", "sparse", "tree")
CONFIGURATIONS = ("eye_to_hand", "eye_in_hand")
#: Probability of an edge outside the spanning tree in a ``sparse`` graph.
SPARSE_EXTRA = 0.2
_DIST_M = (0.4, 1.5)
_OFF_AXIS_RAD = math.radians(20.0)
_TILT_RAD = math.radians(45.0)


@dataclass
class MultiScene:
    """A drawn scene: truth, measured pairs and the noise behind them.

    Attributes
    ----------
    seed, scene_id : int
    configuration : str
        ``"eye_to_hand"`` or ``"eye_in_hand"``.
    X, Y : dict of str -> ndarray (4, 4)
        True unknowns [m] (see the module text for the frames).
    pairs : dict of (str, str) -> (ndarray (N, 4, 4), ndarray (N, 4, 4))
        Measured ``(A, B)`` per edge ``(x_id, y_id)``: the input of :func:`kinhec.calibrate.calibrate_multi`.
    A_true, C_true : dict of (str, str) -> ndarray (N, 4, 4)
        True hand poses and true camera measurements ``T_cam_target`` per edge.
    camera_noise : tuple of float
        ``(rot_std_rad, xy_std_m, z_std_m)`` of the camera ``se3_gaussian`` model.
    robot_noise : tuple of float
        ``(rot_std_rad, trans_std_m)`` of the robot flange twist.
    student_t_dof : float or None
    scale : dict of str -> float
        Monocular scale of every camera (1 for a metric one).
    outliers : dict of (str, str) -> ndarray of bool
    """

    seed: int
    scene_id: int
    configuration: str
    X: dict
    Y: dict
    pairs: dict
    A_true: dict
    C_true: dict
    camera_noise: tuple
    robot_noise: tuple
    student_t_dof: float | None = None
    scale: dict = field(default_factory=dict)
    outliers: dict = field(default_factory=dict)

    @property
    def cameras(self) -> list:
        """Camera ids (the ``Y`` of an eye-to-hand scene, the ``X`` of an eye-in-hand one)."""
        return list(self.Y) if self.configuration == "eye_to_hand" else list(self.X)

    def camera_of(self, edge) -> str:
        """The camera of an edge ``(x_id, y_id)``."""
        return edge[1] if self.configuration == "eye_to_hand" else edge[0]

    @property
    def n_pairs(self) -> int:
        return int(sum(a.shape[0] for a, _ in self.pairs.values()))


def _frames_from_z(z: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """Rotations (n, 3, 3) whose third column is ``z`` (n, 3), turned by ``roll`` [rad] about it."""
    helper = np.where(np.abs(z[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    x = np.cross(helper, z)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.cross(z, x)
    c, s = np.cos(roll)[:, None], np.sin(roll)[:, None]
    xr, yr = c * x + s * y, -s * x + c * y
    return np.stack([xr, yr, z], axis=-1)


def _views(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` camera-to-target poses ``T_cam_target`` (target in front, facing the camera)."""
    d = rng.uniform(*_DIST_M, n)
    u = se3.random_axes_in_cone(rng, n, [0.0, 0.0, 1.0], _OFF_AXIS_RAD)
    normal = np.concatenate([se3.random_axes_in_cone(rng, 1, ui, _TILT_RAD) for ui in u]) if n else np.zeros((0, 3))
    R = _frames_from_z(normal, rng.uniform(-math.pi, math.pi, n))
    return se3.transform_from_rotation_translation(R, d[:, None] * u)


def _look_at(eye: np.ndarray, centre: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Camera poses (n, 4, 4) at ``eye`` (n, 3) with the optical axis towards ``centre``, random roll."""
    z = centre - eye
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return se3.transform_from_rotation_translation(_frames_from_z(z, rng.uniform(-math.pi, math.pi, len(eye))), eye)


def _graph(rng: np.random.Generator, n_x: int, n_y: int, graph: str) -> list:
    """Edges ``(i, j)`` of a connected bipartite graph, sorted."""
    if graph == "dense":
        return [(i, j) for i in range(n_x) for j in range(n_y)]
    # a random spanning tree: Kruskal on random weights over the complete bipartite graph
    cand = [(i, j) for i in range(n_x) for j in range(n_y)]
    order = rng.permutation(len(cand))
    parent = list(range(n_x + n_y))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    edges = set()
    for k in order:
        i, j = cand[k]
        a, b = find(i), find(n_x + j)
        if a != b:
            parent[a] = b
            edges.add((i, j))
    extra = rng.random(len(cand)) < (SPARSE_EXTRA if graph == "sparse" else 0.0)
    edges |= {e for e, x in zip(cand, extra) if x}
    return sorted(edges)


def _level(value, levels: dict, name: str, size: int) -> tuple:
    if isinstance(value, str):
        if value not in levels:
            raise UnknownNameError(f"{name} level", value, levels)
        v = levels[value]
    else:
        v = tuple(float(x) for x in value)
    if name == "camera noise" and len(v) == 4:  # (rot, x, y, z) of kinhec.models.noise.CAMERA_LEVELS
        v = (v[0], v[1], v[3])
    if len(v) != size or not all(math.isfinite(x) and x >= 0 for x in v):
        raise InputError(f"{name}: expected a level name or {size} standard deviations >= 0, got {value!r}")
    return v


def draw_scene(seed: int, scene_id: int, *, n_cameras: int = 3, n_targets: int = 4, graph: str = "dense",
               configuration: str = "eye_to_hand", pairs_per_edge: int | None = 12, n_pairs: int | None = None,
               min_pairs_per_edge: int = 3, camera_noise="c2", robot_noise="r1", student_t_dof=None,
               scale: bool = False, outlier_fraction: float = 0.0, outlier_model: str = "random_pose") -> MultiScene:  # fmt: skip
    """Draw one multi-sensor scene (see the module text).

    Parameters
    ----------
    seed, scene_id : int
        The scene is a function of ``(seed, scene_id)`` and the other arguments.
    n_cameras, n_targets : int
        ``K >= 1`` cameras and ``M >= 1`` targets (tags on the robot, or targets in the world).
    graph : {"dense", "sparse", "tree"}
        Visibility graph.
    configuration : {"eye_to_hand", "eye_in_hand"}
    pairs_per_edge : int, optional
        Pairs of every edge (ignored when ``n_pairs`` is given).
    n_pairs : int, optional
        Total pairs, spread over the edges (at least ``min_pairs_per_edge`` each).
    min_pairs_per_edge : int
    camera_noise : str or tuple
        A :data:`kinhec.models.noise.CAMERA_LEVELS` name or ``(rot_std_rad, xy_std_m, z_std_m)``.
    robot_noise : str or tuple
        A :data:`kinhec.models.noise.ROBOT_LEVELS` name or ``(rot_std_rad, trans_std_m)``.
    student_t_dof : float, optional
        Student-t camera and robot errors (the levels are then their scales).
    scale : bool
        A monocular scale per camera, drawn log-uniformly in [0.5, 2].
    outlier_fraction : float
        Fraction of every edge's pairs replaced by outliers of ``outlier_model``.
    outlier_model : str
        One of :data:`kinhec.models.noise.OUTLIER_MODELS`.

    Returns
    -------
    MultiScene

    Raises
    ------
    InputError, UnknownNameError
        Bad counts, graph, configuration or noise levels.
    """
    for name, v in (("n_cameras", n_cameras), ("n_targets", n_targets), ("min_pairs_per_edge", min_pairs_per_edge)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"{name}: expected an integer >= 1, got {v!r}")
    if graph not in GRAPHS:
        raise UnknownNameError("graph", graph, GRAPHS)
    if configuration not in CONFIGURATIONS:
        raise UnknownNameError("configuration", configuration, CONFIGURATIONS)
    cam_sd = _level(camera_noise, nz.CAMERA_LEVELS, "camera noise", 3)
    rob_sd = _level(robot_noise, nz.ROBOT_LEVELS, "robot noise", 2)
    if not (0.0 <= float(outlier_fraction) < 1.0):
        raise InputError(f"outlier_fraction: expected a value in [0, 1), got {outlier_fraction!r}")
    ss = np.random.SeedSequence([int(seed), int(scene_id)])
    r_geo, r_graph, r_cam, r_rob, r_scale, r_out = (np.random.default_rng(s) for s in ss.spawn(6))
    eth = configuration == "eye_to_hand"
    n_x, n_y = (n_targets, n_cameras) if eth else (n_cameras, n_targets)
    x_ids = [f"tag{i:02d}" if eth else f"cam{i:02d}" for i in range(n_x)]
    y_ids = [f"cam{j:02d}" if eth else f"target{j:02d}" for j in range(n_y)]
    # truth
    if eth:
        centre = np.array([0.5, 0.0, 0.3])
        eye = centre + se3.random_axes_in_cone(r_geo, n_y, [0.0, 0.0, 1.0], math.radians(75.0)) * \
            r_geo.uniform(1.2, 2.0, (n_y, 1))
        Y = _look_at(eye, np.broadcast_to(centre, eye.shape).copy(), r_geo)
        X = se3.transform_from_rotation_translation(se3.random_rotations(r_geo, n_x),
                                                    r_geo.uniform(-0.15, 0.15, (n_x, 3)))  # fmt: skip
    else:
        X = se3.transform_from_rotation_translation(se3.random_rotations(r_geo, n_x),
                                                    r_geo.uniform(-0.25, 0.25, (n_x, 3)))  # fmt: skip
        Y = se3.transform_from_rotation_translation(se3.random_rotations(r_geo, n_y),
                                                    r_geo.uniform(-1.5, 1.5, (n_y, 3)))  # fmt: skip
    edges = _graph(r_graph, n_x, n_y, graph)
    if n_pairs is not None:
        total = int(n_pairs)
        if total < min_pairs_per_edge * len(edges):
            need = min_pairs_per_edge * len(edges)
            raise InputError(f"n_pairs: expected at least {min_pairs_per_edge} per edge ({need} for {len(edges)} "
                             f"edges), got {total}")  # fmt: skip
        counts = min_pairs_per_edge + r_graph.multinomial(total - min_pairs_per_edge * len(edges),
                                                          np.full(len(edges), 1.0 / len(edges)))  # fmt: skip
    else:
        if pairs_per_edge is None or int(pairs_per_edge) < 1:
            raise InputError(f"pairs_per_edge: expected an integer >= 1 (or n_pairs), got {pairs_per_edge!r}")
        counts = np.full(len(edges), int(pairs_per_edge))
    scales = {c: 1.0 for c in (y_ids if eth else x_ids)}
    if scale:
        for c_id in scales:
            scales[c_id] = float(math.exp(r_scale.uniform(math.log(0.5), math.log(2.0))))
    pairs, A_true, C_true, outliers = {}, {}, {}, {}
    for (i, j), n in zip(edges, counts):
        key = (x_ids[i], y_ids[j])
        C = _views(r_geo, int(n))
        if eth:  # C = inv(Y) A X
            A = Y[j] @ C @ se3.invert_transform(X[i], check=False)
        else:  # C = inv(A X) Y
            A = Y[j] @ se3.invert_transform(C, check=False) @ se3.invert_transform(X[i], check=False)
        Cm = nz.camera_se3_gaussian(C, cam_sd[0], cam_sd[1], cam_sd[2], r_cam, student_t_dof=student_t_dof)
        Am = nz.robot_se3_gaussian(A, rob_sd[0], rob_sd[1], r_rob, student_t_dof=student_t_dof)
        cam = key[1] if eth else key[0]
        if scales[cam] != 1.0:
            Cm, _ = nz.apply_scale(Cm, scales[cam], 0.0, r_scale)
        out = np.zeros(int(n), dtype=bool)
        if outlier_fraction > 0:
            Cm, out = nz.apply_outliers(Cm, Cm, outlier_model, float(outlier_fraction), r_out)
        B = Cm if eth else se3.invert_transform(Cm, check=False)
        pairs[key] = (Am, B)
        A_true[key], C_true[key], outliers[key] = A, C, out
    return MultiScene(seed=int(seed), scene_id=int(scene_id), configuration=configuration,
                      X=dict(zip(x_ids, X)), Y=dict(zip(y_ids, Y)), pairs=pairs, A_true=A_true, C_true=C_true,
                      camera_noise=cam_sd, robot_noise=rob_sd, student_t_dof=student_t_dof, scale=scales,
                      outliers=outliers)  # fmt: skip
