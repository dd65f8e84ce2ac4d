"""A DH-table YAML's tool and default reach (:mod:`kinhec.models.robot_files`) against hand-computed truth."""

from __future__ import annotations

import math

import numpy as np

from kinhec.models.robot_files import robot_from_dh_yaml, rpy_matrix

TWO = ("convention: standard\njoints:\n"
       "  - {a_m: 0.0, alpha_deg: 90, d_m: 0.4, limits_deg: [-170, 170]}\n"
       "  - {a_m: 0.3, alpha_deg: 0, d_m: 0.0, limits_deg: [-120, 120]}\n")


def test_tool_rpy_is_in_degrees_and_composes_after_the_last_frame(tmp_path):
    bare = tmp_path / "bare.yaml"
    bare.write_text(TWO + "home_deg: [0, 0]\nreach_m: 1\n")
    tooled = tmp_path / "tool.yaml"
    tooled.write_text(TWO + "home_deg: [0, 0]\nreach_m: 1\n"
                      "tool: {xyz_m: [0.01, -0.02, 0.15], rpy_deg: [30, -20, 75]}\n")
    tool = np.eye(4)
    tool[:3, :3] = rpy_matrix(math.radians(30), math.radians(-20), math.radians(75))
    tool[:3, 3] = [0.01, -0.02, 0.15]
    q = np.random.default_rng(1).uniform(-1.5, 1.5, (40, 2))
    assert np.abs(robot_from_dh_yaml(tooled).fk(q) - robot_from_dh_yaml(bare).fk(q) @ tool).max() <= 1e-14


def test_default_reach_is_measured_from_the_first_joint_frame(tmp_path):
    # frame 1 sits at (0, 0, 0.4) whatever q1; the flange lies 0.3 m from it in every configuration (and up to
    # 0.7 m from the base): the reach the file leaves out is 0.3 m
    path = tmp_path / "two.yaml"
    path.write_text(TWO)
    m = robot_from_dh_yaml(path)
    assert abs(m.reach_m - 0.3) <= 1e-12
    q = np.random.default_rng(2).uniform(m.q_min_rad, m.q_max_rad, (200, 2))
    assert np.linalg.norm(m.fk(q)[:, :3, 3], axis=-1).max() > 0.6  # the base is farther: the frame matters
