"""Regenerate the screenshots of the report pages in docs/ (``report_*.png``).

Generates and benchmarks the smoke tier into a temporary folder (or uses ``--data DIR``, a benchmarked folder),
writes its benchmark page and the calibration page of ``kinhec calibrate --dataset DIR --sequence
temporal-000001``, opens both in headless Chromium (Debian's ``/usr/bin/chromium`` through Playwright) at
1,020 px and saves the views the README links to.

Usage (from the repository root)::

    python docs/report_screenshots.py [--data DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDTH = 1020

#: file -> (page, clicks before the shot, height of the shot [px])
SHOTS = {
    "report_leaderboard.png": ("benchmark", [], 570),
    "report_curves.png": ("benchmark", ["nav button[data-view=curves]"], 570),
    "report_dataset.png": ("benchmark", ["nav button[data-view=dataset]"], 570),
    "report_sequence.png": ("benchmark", ["nav button[data-view=sequences]", "js:kinhecReport.openSequence('pnp-000000')"],
                            885),
    "report_calibration.png": ("calibration", [], 1125),
}  # fmt: skip


def _pages(root: Path, tmp: Path) -> dict[str, Path]:
    from kinhec.calibrate import calibrate
    from kinhec.report import build_benchmark_report, write_calibration_report

    res = calibrate(None, (), dataset=root, sequence="temporal-000001")
    return {"benchmark": build_benchmark_report(root, tmp / "report.html"),
            "calibration": write_calibration_report(res.to_dict(), tmp / "calibration.html")}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="a benchmarked dataset folder (default: the smoke tier)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = args.data
        if root is None:
            from kinhec.evaluate.benchmark import run_benchmark
            from kinhec.synth.runner import generate_dataset

            root = Path(tmp) / "smoke"
            generate_dataset("smoke", root, workers=2, progress=False)
            run_benchmark(root, workers=2)
        pages = _pages(root, Path(tmp))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
            for name, (which, clicks, height) in SHOTS.items():
                page = browser.new_page(viewport={"width": WIDTH, "height": height})
                page.goto(pages[which].resolve().as_uri())
                page.wait_for_function("document.body.dataset.ready === '1'")
                for c in clicks:
                    page.evaluate(c[3:]) if c.startswith("js:") else page.click(c)
                    page.wait_for_timeout(1500)
                page.wait_for_timeout(800)
                if name == "report_sequence.png":  # the drill-down, scrolled into view by the page
                    page.screenshot(path=str(HERE / name))
                else:
                    page.evaluate("window.scrollTo(0, 0)")
                    page.screenshot(path=str(HERE / name), clip={"x": 0, "y": 0, "width": WIDTH, "height": height},
                                    full_page=True)  # fmt: skip
                page.close()
                print(f"written {HERE / name}")
            browser.close()


if __name__ == "__main__":
    main()
