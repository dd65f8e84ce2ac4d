"""What ``kinhec calibrate --images`` costs on the RWHE-Calib kuka_1 images: detection, calibration, a wrong size.

Usage::

    python benchmarks/bench_detect.py [--images DIR --hand FILE --target SPEC] [--workers N] [--repeat 1]

Default: the 30 RWHE-Calib kuka_1 images (1928x1208, a 28x17 chessboard) from
``../shared/realdata/rwhe_calib/kuka_1``.  BLAS runs on one thread (as
``calibrate --images`` runs it); OpenCV's threads are left to
:func:`kinhec.vision.detect.detect_images` (``cores // workers`` each).  CPU is
user + system time of the process, every thread counted (``os.times``), wall
is ``perf_counter``; the load average is printed with them, as the machine is
shared.  It prints:

* detection of every image, the whole image searched, with 1 worker and with
  ``--workers`` (default: the cores available), and whether the corners are the
  same bit for bit;
* the fast path (``--fast-detection``: half size, then the board's window) and
  how far its corners are from the whole image's search (median, max [px]);
* the whole ``calibrate(images=...)`` call, default and fast, with its split
  into detection and calibration (from the result's cost entry) and ``X``'s
  distance between the two in units of its standard deviation;
* a board size given in squares (``cols + 1 x rows + 1``): how long until the
  run stops with the hint.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.util.errors import InputError  # noqa: E402
from kinhec.vision.detect import available_cores, detect_images  # noqa: E402
from kinhec.vision.pairing import list_images  # noqa: E402
from kinhec.vision.targets import parse_target  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KUKA_1 = next((p / "shared" / "realdata" / "rwhe_calib" / "kuka_1" for p in ROOT.parents
               if (p / "shared" / "realdata").is_dir()), ROOT.parent / "shared" / "realdata" / "rwhe_calib" / "kuka_1")  # fmt: skip


def _timed(f):
    t0, w0 = os.times(), time.perf_counter()
    out = f()
    t1 = os.times()
    cpu = (t1.user + t1.system + t1.children_user + t1.children_system) - (t0.user + t0.system + t0.children_user +
                                                                          t0.children_system)  # fmt: skip
    return out, cpu, time.perf_counter() - w0


def _load() -> str:
    return "load average {:.1f}".format(os.getloadavg()[0])


def _same(a, b) -> bool:
    return all(x.ok == y.ok and np.array_equal(x.uv_px, y.uv_px)
               and all(np.array_equal(p[1], q[1]) for p, q in zip(x.alternatives, y.alternatives))
               for x, y in zip(a, b))  # fmt: skip


def _sigmas(res, ref) -> float:
    """Largest component of X's difference (rotation vector [rad], translation [m]) over ref's standard deviation."""
    d = np.concatenate([se3.so3_log(ref.X[:3, :3].T @ res.X[:3, :3]), res.X[:3, 3] - ref.X[:3, 3]])
    return float(np.max(np.abs(d) / ref.X_std))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=Path, default=KUKA_1 / "images")
    ap.add_argument("--hand", type=Path, default=KUKA_1 / "RobotPosesVec.txt")
    ap.add_argument("--target", default="chessboard:28x17:0.02")
    ap.add_argument("--workers", type=int, default=None)
    a = ap.parse_args(argv)
    if not a.images.is_dir():
        print(f"no images at {a.images} (../shared/realdata is absent): give --images, --hand and --target")
        return 1
    files = list_images(a.images)
    n = len(files)
    workers = a.workers or available_cores()
    h, w = cv2.imread(str(files[0]), cv2.IMREAD_GRAYSCALE).shape
    print(f"{n} images of {w}x{h} in {a.images}, target {a.target}; OpenCV {cv2.__version__}, {available_cores()} "
          f"cores, {workers} workers; {_load()}")
    full1, c, wl = _timed(lambda: detect_images(files, a.target, workers=1))
    print(f"detection, whole image, 1 worker: {c:.2f} s CPU ({1000 * c / n:.0f} ms per image), {wl:.2f} s wall; "
          f"{sum(d.ok for d in full1)}/{n} found; {_load()}")
    fulln, c, wl = _timed(lambda: detect_images(files, a.target, workers=workers))
    print(f"detection, whole image, {workers} workers: {c:.2f} s CPU, {wl:.2f} s wall; corners the same bit for bit "
          f"as with 1 worker: {_same(full1, fulln)}; {_load()}")
    fast, c, wl = _timed(lambda: detect_images(files, a.target, workers=workers, fast=True))
    ok = [(x, y) for x, y in zip(full1, fast) if x.ok and y.ok]
    for m in ("sector", "cornersubpix"):
        d = np.concatenate([np.linalg.norm(x.with_method(m).uv_px - y.with_method(m).uv_px, axis=1) for x, y in ok])
        print(f"  {m} corners, fast against whole image: median {np.median(d):.2g} px, max {d.max():.2g} px")
    print(f"detection, fast (half size, then the board's window), {workers} workers: {c:.2f} s CPU, {wl:.2f} s wall; "
          f"{len(ok)}/{n} found by both; {_load()}")
    runs = {}
    for name, fast_det in (("default", False), ("fast", True)):
        res, c, wl = _timed(lambda: calibrate(a.hand, images=a.images, target=a.target, workers=workers,
                                              fast_detection=fast_det))  # fmt: skip
        cost = res.inputs["images"]["cost"]
        runs[name] = res
        print(f"calibrate --images ({name}): {c:.2f} s CPU, {wl:.2f} s wall = detection {cost['detection_cpu_s']:.2f} s "
              f"CPU / {cost['detection_wall_s']:.2f} s wall + calibration {cost['calibration_cpu_s']:.2f} s CPU / "
              f"{cost['calibration_wall_s']:.2f} s wall; {res.n_pairs} views, outliers "
              f"{res.inputs['images']['outliers']}; {_load()}")
    rot, trans = se3.pose_error(runs["fast"].X, runs["default"].X)
    print(f"  X fast against default: {rot:.2g} deg / {trans:.2g} mm ({_sigmas(runs['fast'], runs['default']):.2f} "
          "sigma at most)")
    t = parse_target(a.target)
    if hasattr(t, "cols"):
        wrong = a.target.replace(f"{t.cols}x{t.rows}", f"{t.cols + 1}x{t.rows + 1}")
        t0, w0 = os.times(), time.perf_counter()
        try:
            calibrate(a.hand, images=a.images, target=wrong, workers=workers)
            what = "not refused"
        except InputError as exc:
            what = f"refused: {exc}"
        t1 = os.times()
        print(f"{wrong}: {t1.user + t1.system - t0.user - t0.system:.2f} s CPU, {time.perf_counter() - w0:.2f} s wall; "
              f"{what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
