"""The edge-reading check of ``calibrate_multi`` (``kinhec.calibrate.multi_edges``) on generated scenes.

    python benchmarks/bench_multi_edges.py [--scenes 8]

For every scene (2-4 cameras, 2-5 targets, dense, sparse and tree graphs, both configurations, 10 pairs per edge
or 60 pairs spread over the edges (3 or more each), a monocular scale in every fourth, 15 % outliers in every
fifth): the edges the check calls contradicted as drawn (false alarms), then the first three edges with their eye
poses inverted and with their hand poses inverted in turn (found: that edge alone contradicted, fitting only that
file inverted).  Prints the counts and the CPU time.
"""

from __future__ import annotations

import argparse
import time

from kinhec.geometry import se3
from kinhec.synth import scenes
from kinhec.calibrate import multi_edges as me


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=int, default=8, help="scene ids per graph and configuration")
    args = ap.parse_args()
    t0 = time.process_time()
    n_scenes = alarms = tried = found = 0
    for sid in range(args.scenes):
        for graph in ("dense", "sparse", "tree"):
            for conf in ("eye_to_hand", "eye_in_hand"):
                kw = dict(n_cameras=2 + sid % 3, n_targets=2 + sid % 4, graph=graph, configuration=conf,
                          pairs_per_edge=None if sid % 2 else 10, n_pairs=60 if sid % 2 else None,
                          camera_noise=("c1", "c2", "c3")[sid % 3], scale=sid % 4 == 3,
                          outlier_fraction=0.15 if sid % 5 == 4 else 0.0)  # fmt: skip
                sc = scenes.draw_scene(7, sid, **kw)
                scaled = list(sc.pairs) if kw["scale"] else []
                n_scenes += 1
                alarms += sum(c.contradicted for c in me.check_edges(sc.pairs, scaled_edges=scaled).values())
                for e in list(sc.pairs)[:3]:
                    for which in ("eye", "hand"):
                        p = dict(sc.pairs)
                        A, B = p[e]
                        p[e] = (se3.invert_transform(A), B) if which == "hand" else (A, se3.invert_transform(B))
                        ch = me.check_edges(p, scaled_edges=scaled)
                        tried += 1
                        found += ([f for f, c in ch.items() if c.contradicted] == [e]
                                  and ch[e].fitting == [(which == "hand", which == "eye")])  # fmt: skip
    print(f"{n_scenes} scenes: {alarms} false alarms; {found} of {tried} inverted files found; "
          f"{time.process_time() - t0:.1f} CPU-s")


if __name__ == "__main__":
    main()
