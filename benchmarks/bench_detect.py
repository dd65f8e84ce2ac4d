"""CPU cost of ``kinhec calibrate --images`` on one core: detecting the target in every image, then the calibration.

Usage::

    python benchmarks/bench_detect.py [--images DIR --hand FILE --target SPEC] [--repeat 3]

Default: the 30 RWHE-Calib kuka_1 images (1928x1208, a 28x17 chessboard) from
``../shared/realdata/rwhe_calib/kuka_1``.  BLAS and OpenCV threads are pinned
to one before anything is imported, so the figures are one core's work.  It
prints, per repeat and as medians: the detection (read, find, order, refine,
check) per image and in total, the calibration (intrinsics, he_ml on the
pixels), and the whole ``calibrate(images=...)`` call, in CPU seconds
(``time.process_time``) and wall seconds.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402

from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.vision.detect import detect_images  # noqa: E402
from kinhec.vision.pairing import list_images  # noqa: E402

cv2.setNumThreads(1)
ROOT = Path(__file__).resolve().parents[1]
KUKA_1 = next((p / "shared" / "realdata" / "rwhe_calib" / "kuka_1" for p in ROOT.parents
               if (p / "shared" / "realdata").is_dir()), ROOT.parent / "shared" / "realdata" / "rwhe_calib" / "kuka_1")  # fmt: skip


def _timed(f):
    c, w = time.process_time(), time.perf_counter()
    out = f()
    return out, time.process_time() - c, time.perf_counter() - w


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=Path, default=KUKA_1 / "images")
    ap.add_argument("--hand", type=Path, default=KUKA_1 / "RobotPosesVec.txt")
    ap.add_argument("--target", default="chessboard:28x17:0.02")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args(argv)
    if not a.images.is_dir():
        print(f"no images at {a.images} (../shared/realdata is absent): give --images, --hand and --target")
        return 1
    files = list_images(a.images)
    h, w = cv2.imread(str(files[0]), cv2.IMREAD_GRAYSCALE).shape
    print(f"{len(files)} images of {w}x{h} in {a.images}, target {a.target}; OpenCV {cv2.__version__}, one thread")
    rows = []
    for k in range(a.repeat):
        dets, c_det, w_det = _timed(lambda: detect_images(files, a.target))
        res, c_all, w_all = _timed(lambda: calibrate(a.hand, images=a.images, target=a.target))
        n_ok = sum(d.ok for d in dets)
        rows.append((c_det, w_det, c_all, w_all))
        print(f"repeat {k + 1}: detection {c_det:.2f} s CPU ({1000 * c_det / len(files):.0f} ms per image, {n_ok}/"
              f"{len(files)} found, {w_det:.2f} s wall); detection + calibration {c_all:.2f} s CPU ({w_all:.2f} s wall; "
              f"calibration alone about {c_all - c_det:.2f} s CPU); {res.n_pairs} views, {len(res.outliers)} outliers")
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(f"median of {len(rows)}: detection {med[0]:.2f} s CPU, detection + calibration {med[2]:.2f} s CPU "
          f"({med[3]:.2f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
