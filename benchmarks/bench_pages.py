"""Size and opening time of the report pages in headless Chromium.

Opens each HTML page given on the command line from ``file://`` in Debian's
Chromium (``/usr/bin/chromium``, driven by Playwright) a few times and prints
its size, the time to the ``load`` event and the time until the page says it
has drawn its first view (``document.body.dataset.ready``, set by the page
script once the first tab's figures are drawn), median and best of the runs,
and the CPU time of the page's main thread until then (DevTools' ``ThreadTime``:
less sensitive than wall times to other work on the machine);
for the benchmark page also the time from a click on its "Robustness curves"
tab to the figure drawn (the first figure unpacks and runs plotly.js).
Without arguments it writes the two pages first: a calibration page
(``kinhec calibrate`` on a temporal smoke sequence) and the benchmark page of
the smoke tier, both into a temporary folder.

Run: ``python benchmarks/bench_pages.py [PAGE.html ...] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path


def _write_pages(tmp: Path) -> list[Path]:
    from kinhec.evaluate.benchmark import run_benchmark
    from kinhec.calibrate import calibrate
    from kinhec.report import build_benchmark_report, write_calibration_report
    from kinhec.synth.runner import generate_dataset

    root = tmp / "smoke"
    generate_dataset("smoke", root, workers=2, progress=False)
    run_benchmark(root, workers=2)
    res = calibrate(None, (), dataset=root, sequence="temporal-000001")
    cal = write_calibration_report(res.to_dict(), tmp / "calibration.html")
    return [cal, build_benchmark_report(root, tmp / "report.html")]


def _thread_time(cdp) -> float:
    return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "ThreadTime")


def _open(browser, page_path: Path) -> tuple[float, float, float, float]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Performance.enable")
    cpu0 = _thread_time(cdp)
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page.goto(page_path.resolve().as_uri(), wait_until="load", timeout=120_000)
    page.wait_for_function("document.body.dataset.ready === '1'", timeout=120_000)
    cpu = _thread_time(cdp) - cpu0
    load = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
    ready = page.evaluate("Number(document.body.dataset.readyAt)")
    first_plot = float("nan")
    if page.query_selector("nav button[data-view=curves]") is not None:  # the benchmark page: its first figure
        t0 = page.evaluate("performance.now()")
        page.click("nav button[data-view=curves]")
        page.wait_for_function("(() => { const d = document.querySelector('#curves'); return d && d._fullLayout; })()",
                               timeout=120_000)  # fmt: skip
        first_plot = (page.evaluate("performance.now()") - t0) / 1e3
    ctx.close()
    return load / 1e3, ready / 1e3, first_plot, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        pages = args.pages or _write_pages(Path(tmp))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
            for path in pages:
                runs = [_open(browser, path) for _ in range(max(args.repeats, 1))]
                loads, readys, plots, cpus = ([r[k] for r in runs] for k in range(4))
                extra = (f"; first figure (Robustness curves tab, plotly.js unpacked and run) median "
                         f"{statistics.median(plots):.2f} s after the click" if plots[0] == plots[0] else "")
                print(f"{path.name}: {path.stat().st_size / 1e6:.2f} MB; load event median {statistics.median(loads):.2f} s "
                      f"(best {min(loads):.2f}), first view drawn median {statistics.median(readys):.2f} s "
                      f"(best {min(readys):.2f}; main-thread CPU median {statistics.median(cpus):.2f} s){extra} "
                      f"over {len(runs)} runs")  # fmt: skip
            browser.close()


if __name__ == "__main__":
    main()
