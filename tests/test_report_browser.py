"""The report pages in a real browser: Debian's headless Chromium driven by Playwright.

Each page is opened from ``file://``; every request that is not for a local
file fails the test (the pages must work offline), and so does any console
error or uncaught exception.  Screenshots of every view are written next to
the page and checked to be non-blank (pixel variance and colour count).

Chromium comes from the distribution (``apt-get install chromium``, done by
``.ci/run``); Playwright's own browser download is not used.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kinhec
from kinhec.report import build_benchmark_report, write_calibration_report

from helpers.calibration_result import calibration_result

pytestmark = pytest.mark.heavy


def _chromium() -> str | None:
    for name in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if Path(name).is_file():
            return name
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: .ci/run must install it (apt-get install -y chromium)")
        pytest.skip("Chromium is not installed here (apt-get install -y chromium); CI installs it and runs these tests")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is in the dev extra")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


class Watched:
    """A page whose console errors, uncaught exceptions and non-local requests are recorded."""

    def __init__(self, browser, width: int = 1400, height: int = 900):
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.remote: list[str] = []
        self.local: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"exception: {e}"))
        self.context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if url.startswith("file://"):
            self.local.append(url)
            route.continue_()
        else:
            self.remote.append(url)
            route.abort()

    def open(self, path: Path) -> None:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")

    def check_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.remote == [], f"the page tried to fetch {self.remote[:5]}"

    def close(self) -> None:
        self.context.close()


def _plot_ready(page, selector: str) -> None:
    page.wait_for_function(f"(() => {{ const d = document.querySelector({selector!r}); "
                           "return d && d._fullLayout && d.data && d.data.length > 0; })()")  # fmt: skip


def assert_not_blank(png: Path, min_std: float = 8.0, min_colors: int = 30) -> None:
    """The screenshot shows something: grey-level spread and distinct colours above a blank page's."""
    from PIL import Image

    img = np.asarray(Image.open(png).convert("RGB"), dtype=np.float64)
    grey = img.mean(axis=2)
    colors = np.unique(img.reshape(-1, 3).astype(np.uint8), axis=0).shape[0]
    assert grey.std() > min_std and colors > min_colors, f"{png}: looks blank (std {grey.std():.1f}, {colors} colours)"


# --------------------------------------------------------------------------- #
# the benchmark page
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def bench_page(smoke_benchmarked, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    return build_benchmark_report(smoke_benchmarked, out)


@pytest.fixture()
def watched(browser):
    w = Watched(browser)
    yield w
    w.close()


def _column(page, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(f"{table} tbody tr", f"rows => rows.map(r => r.children[{index}].textContent)")


def _header_index(page, table: str, key: str) -> int:
    return page.eval_on_selector_all(f"{table} thead tr:last-child th", f"ths => ths.findIndex(t => t.dataset.key === {key!r})")


def _num(texts):
    return [np.inf if t == "\u2013" else float(t) for t in texts]


def test_benchmark_page_loads_offline_and_sorts_the_leaderboard(watched, bench_page, smoke_benchmarked):
    page = watched.page
    watched.open(bench_page)
    page.wait_for_selector("#leaderboard tbody tr")
    assert watched.local and all(u.startswith("file://") for u in watched.local)
    shot = bench_page.with_name("view_leaderboard.png")
    page.screenshot(path=str(shot))
    assert_not_blank(shot)

    # the table shows the medians of the results file (first track, oracle)
    results = pd.read_parquet(smoke_benchmarked / "benchmarks" / "results.parquet")
    track = page.eval_on_selector("#lb-track", "s => s.value")
    solvers = _column(page, "#leaderboard", 0)
    key = "X_trans_err_mm:oracle"
    col = _header_index(page, "#leaderboard", key)
    shown = dict(zip(solvers, _num(_column(page, "#leaderboard", col))))
    ok = results[(results.track == track) & (results.eval_sync == "oracle") & results.ok]
    expected = ok.groupby("solver")["X_trans_err_mm"].median()
    for solver, v in expected.items():
        assert shown[solver] == pytest.approx(v, rel=6e-3), solver

    # one click sorts ascending, a second one descending
    th = f"#leaderboard thead th[data-key='{key}']"
    page.click(th)
    assert page.get_attribute(th, "aria-sort") == "ascending"
    vals = _num(_column(page, "#leaderboard", col))
    assert vals == sorted(vals) and len(vals) == len(expected)
    page.click(th)
    assert page.get_attribute(th, "aria-sort") == "descending"
    vals = [v for v in _num(_column(page, "#leaderboard", col)) if np.isfinite(v)]
    assert vals == sorted(vals, reverse=True)
    page.click("#leaderboard thead th[data-key='solver']")
    names = _column(page, "#leaderboard", 0)
    assert names == sorted(names, key=str.lower) or names == sorted(names)

    # another track shows that track's rows
    other = [t for t in results.track.unique() if t != track][0]
    page.select_option("#lb-track", other)
    n = results[(results.track == other)].solver.nunique()
    assert len(_column(page, "#leaderboard", 0)) == n

    # on every track, at 1,400 px: the whole table is in view (runtime column included, no horizontal scroll),
    # and the bold cell of each error column is that column's smallest value
    for t in page.eval_on_selector_all("#lb-track option", "os => os.map(o => o.value)"):
        page.select_option("#lb-track", t)
        fits = page.evaluate("""() => { const s = document.querySelector('#leaderboard').parentElement;
            const th = document.querySelector("#leaderboard thead th[data-key='runtime_ms']");
            return [s.scrollWidth <= s.clientWidth + 1, th ? th.getBoundingClientRect().right <= window.innerWidth : null]; }""")
        assert fits[0] and fits[1] is not False, (t, fits)
        columns = page.evaluate("""() => {
            const keys = Array.from(document.querySelectorAll('#leaderboard thead tr:last-child th')).map(h => h.dataset.key);
            const rows = Array.from(document.querySelectorAll('#leaderboard tbody tr'));
            return keys.map((k, i) => [k, rows.map(r => [r.children[i].textContent, r.children[i].className])]); }""")
        for key, cells in columns:
            if not (key.startswith("X_") or key.startswith("Y_")):
                continue
            vals = [float(c) for c, _ in cells if c != "\u2013"]
            bold = [float(c) for c, cls in cells if "best" in cls]
            if len(vals) > 1:
                assert bold and all(b == min(vals) for b in bold), (t, key, bold, min(vals))
    watched.check_clean()


def test_choosing_a_track_redraws_the_curves(watched, bench_page):
    page = watched.page
    watched.open(bench_page)
    page.click("nav button[data-view=curves]")
    _plot_ready(page, "#curves")
    title = lambda: page.eval_on_selector("#curves", "d => d._fullLayout.title.text")  # noqa: E731
    xs = lambda: page.eval_on_selector("#curves", "d => JSON.stringify(d.data.map(t => t.x))")  # noqa: E731
    tracks = page.eval_on_selector_all("#cv-track option", "os => os.map(o => o.value)")
    assert len(tracks) >= 2
    assert tracks[0] in title()
    before = xs()
    # log axes: every tick text is the tick's whole value (0.05, not a bare "5"); nothing cut at the right edge
    for ax in ("yaxis", "yaxis2"):
        vals, texts = page.evaluate(f"(() => {{ const a = document.querySelector('#curves')._fullLayout.{ax}; "
                                    "return [a.tickvals, a.ticktext]; })()")
        assert len(vals) >= 2 and [float(t) for t in texts] == pytest.approx(vals, rel=1e-9)
    shown = page.eval_on_selector_all("#curves .ytick text, #curves .y2tick text", "ts => ts.map(t => t.textContent)")
    assert shown and all(float(t) > 0 for t in shown)
    right = page.evaluate("""() => { const d = document.querySelector('#curves').getBoundingClientRect().right;
        return Math.max(...Array.from(document.querySelectorAll('#curves .xtick text, #curves .x2tick text'))
                        .map(t => t.getBoundingClientRect().right)) - d; }""")
    assert right <= 0, f"an x tick label runs {right:.0f} px past the figure"
    # one palette: the page's colours are kinhec.util.palette's, the PNGs' too; tsai_lenz and reprojection differ
    from kinhec.util import palette

    swatches = dict(page.eval_on_selector_all("#cv-solvers label", "ls => ls.map(l => [l.textContent.trim(), "
                                              "getComputedStyle(l.querySelector('.swatch')).backgroundColor])"))
    rgb = lambda h: f"rgb({int(h[1:3], 16)}, {int(h[3:5], 16)}, {int(h[5:7], 16)})"  # noqa: E731
    assert swatches and all(c == rgb(palette.SOLVER_COLORS[s]) for s, c in swatches.items() if s in palette.SOLVER_COLORS)
    assert swatches["tsai_lenz"] != swatches["reprojection"] and swatches["he_ml"] == "rgb(0, 0, 0)"
    shot = bench_page.with_name("view_curves.png")
    page.screenshot(path=str(shot))
    assert_not_blank(shot)

    page.select_option("#cv-track", tracks[1])
    page.wait_for_function(f"document.querySelector('#curves')._fullLayout.title.text.indexOf({tracks[1]!r}) >= 0")
    assert tracks[1] in title() and xs() != before
    factors = page.eval_on_selector_all("#cv-factor option", "os => os.map(o => o.textContent)")
    assert factors and all(f in page.content() for f in factors)

    # unticking a solver hides its two traces only
    solver = page.eval_on_selector("#cv-solvers input", "i => i.value")
    page.click(f"#cv-solvers input[value='{solver}']")
    vis = page.eval_on_selector("#curves", "d => d.data.map(t => [t.legendgroup, t.visible])")
    assert all((v is False) == (g == solver) for g, v in vis)
    watched.check_clean()


def test_dataset_view_draws_every_composition_figure(watched, bench_page):
    page = watched.page
    watched.open(bench_page)
    page.click("nav button[data-view=dataset]")
    page.wait_for_function("document.querySelectorAll('#composition .js-plotly-plot').length >= 6")
    n_tracks = page.evaluate("KINHEC.composition[0].data.reduce((a, t) => a + t.y.reduce((s, v) => s + v, 0), 0)")
    assert n_tracks == 46  # every sequence of the smoke tier counted once in the per-track bars
    shot = bench_page.with_name("view_dataset.png")
    page.screenshot(path=str(shot), full_page=True)
    assert_not_blank(shot)
    watched.check_clean()


def test_opening_a_sequence_renders_a_webgl_scene(watched, bench_page):
    page = watched.page
    watched.open(bench_page)
    page.click("nav button[data-view=sequences]")
    page.wait_for_selector("#sequences tbody tr")
    assert len(page.query_selector_all("#sequences tbody tr")) == 46
    # at 1,400 px every column of the sequence table is in view (the level strings wrap)
    assert page.evaluate("() => { const s = document.querySelector('#sequences').parentElement; "
                         "return s.scrollWidth <= s.clientWidth + 1; }")  # fmt: skip
    page.select_option("#sq-track", "pnp")
    ids = _column(page, "#sequences", 0)
    assert ids and all(i.startswith("pnp-") for i in ids)
    # sort by the median error, worst first, then open the first row
    page.click("#sequences thead th[data-key='median_rot']")
    page.click("#sequences thead th[data-key='median_rot']")
    med = [v for v in _num(_column(page, "#sequences", 9)) if np.isfinite(v)]
    assert med == sorted(med, reverse=True)
    first = _column(page, "#sequences", 0)[0]
    page.click("#sequences tbody tr:first-child")
    _plot_ready(page, "#seq-scene")
    page.wait_for_selector("#seq-scene canvas")
    has_gl = page.evaluate("""() => Array.from(document.querySelectorAll('#seq-scene canvas')).some(c => {
        const gl = c.getContext('webgl') || c.getContext('experimental-webgl');
        return gl && gl.drawingBufferWidth > 0; })""")
    assert has_gl, "no WebGL canvas in the scene"
    assert first in page.text_content("#drill-title")
    assert "validation:" in page.text_content("#drill-status")
    n_results = len(page.query_selector_all("#seq-results tbody tr"))
    assert n_results == page.evaluate(f"KINHEC.sequences.find(r => r.id === {first!r}).results.length") > 0
    _plot_ready(page, "#streams")
    page.wait_for_timeout(300)
    shot = bench_page.with_name("view_sequence.png")
    page.screenshot(path=str(shot), full_page=True)
    assert_not_blank(shot)
    scene_shot = bench_page.with_name("view_scene.png")
    page.locator("#seq-scene").screenshot(path=str(scene_shot))
    assert_not_blank(scene_shot, min_std=5.0)
    watched.check_clean()


def test_every_kind_of_sequence_opens_without_error(watched, bench_page, smoke_benchmarked):
    """One sequence per (track, configuration, robot kind, world frame): arms and free6d, boards and VO origins."""
    man = kinhec.load_manifest(smoke_benchmarked)
    kinds = man.assign(free=man.robot == "free6d").drop_duplicates(["track", "configuration", "free", "world_frame"])
    assert kinds.free.any() and (kinds.world_frame == "vo_origin").any() and (kinds.configuration == "eye_to_hand").any()
    page = watched.page
    watched.open(bench_page)
    page.click("nav button[data-view=sequences]")
    page.wait_for_selector("#sequences tbody tr")
    for sid in kinds.sequence_id:
        page.evaluate(f"kinhecReport.openSequence({sid!r})")
        page.wait_for_function(f"document.querySelector('#drill-title').textContent.startsWith({sid!r})")
        traces = page.evaluate("document.querySelector('#seq-scene').data.map(t => t.type)")
        assert "scatter3d" in traces, sid
        assert ("mesh3d" in traces) == (man.set_index("sequence_id").loc[sid, "world_frame"] != "vo_origin"
                                        or man.set_index("sequence_id").loc[sid, "configuration"] == "eye_to_hand"), sid
        n_stream = page.evaluate("document.querySelector('#streams').data.filter(t => t.xaxis === 'x2' && t.mode !== 'markers').length")
        assert n_stream == 3, sid
    watched.check_clean()


# --------------------------------------------------------------------------- #
# the calibration page
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("sid, offset", [("temporal-000001", True), ("outliers-000002", False)])
def test_calibration_page(watched, smoke_benchmarked, tmp_path, sid, offset):
    seq = kinhec.load_sequence(smoke_benchmarked, sid)
    result = calibration_result(seq, np.random.default_rng(11), estimate_offset=offset)
    path = write_calibration_report(result, tmp_path / "calibration.html")
    page = watched.page
    watched.open(path)
    _plot_ready(page, "#fig-residuals")
    assert result["verdict"] in page.text_content("#verdict")
    # the quaternion row is labelled x, y, z, w and holds X_quat_xyzw
    row = page.eval_on_selector_all("table.kv tbody tr", "rs => rs.map(r => [r.children[0].textContent, "
                                    "r.children[1].textContent])")  # fmt: skip
    quat = dict(row)[f"{result['X_name']} quaternion (x, y, z, w)"]
    q = np.array([float(v) for v in quat.split(",")])
    assert np.allclose(q, result["X_quat_xyzw"], atol=2e-6) or np.allclose(q, -np.asarray(result["X_quat_xyzw"]), atol=2e-6)
    # time from the first pair when stamped, the pair index without stamps
    title, xs = page.evaluate("(() => { const d = document.querySelector('#fig-residuals'); "
                              "return [d._fullLayout.xaxis.title.text, d.data.flatMap(t => t.xaxis === 'x' ? t.x : [])]; })()")
    assert title == "time since the first pair [s]" and min(xs) == pytest.approx(0.0, abs=1e-9)
    # the page stores the times to 0.1 ms (kinhec.report.calibration._residual_figure)
    assert max(xs) == pytest.approx(max(result["residuals"]["t_s"]) - min(result["residuals"]["t_s"]), abs=5e-5)
    # the observability table: units, the limit that decides, the reference, and the verdict's reasons
    obs = page.eval_on_selector_all("#obs-table tbody tr", "rs => rs.map(r => Array.from(r.children).map(c => c.textContent))")
    assert obs and all(len(r) == 6 for r in obs)
    by = {r[0]: r for r in obs}
    assert by["rotation range"][1].endswith(" deg") and by["rotation range"][2] == "≥ 2 deg"
    assert "{" not in page.text_content("#obs-table") and "[" not in page.text_content("#obs-table")
    assert page.text_content("#verdict-why").split(":")[0] in ("Determined", "Not determined")
    n_out = page.evaluate("""() => document.querySelector('#fig-residuals').data
        .filter(t => t.name === 'outlier' && t.yaxis === 'y').reduce((a, t) => a + t.x.length, 0)""")
    assert n_out == len(result["outliers"])
    if offset:
        _plot_ready(page, "#fig-offset")
        x_line = page.evaluate("document.querySelector('#fig-offset')._fullLayout.shapes[0].x0")
        assert x_line == pytest.approx(1e3 * result["time_offset_s"])
    else:
        assert page.query_selector("#fig-offset") is None
    _plot_ready(page, "#fig-frames")
    views = page.evaluate("document.querySelector('#fig-frames')._fullLayout.annotations.map(a => a.text)")
    assert [v.split("</b>")[0].replace("<b>", "") for v in views] == ["top view", "front view", "side view"]
    page.wait_for_timeout(300)
    shot = tmp_path / "calibration.png"
    page.screenshot(path=str(shot), full_page=True)
    assert_not_blank(shot)
    watched.check_clean()


def test_the_watch_catches_remote_requests_and_console_errors(watched, tmp_path):
    """The checks above can fail: a page that fetches from the network and logs an error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img src="http://kinhec.invalid/x.png"><script>console.error("boom")</script></body></html>')
    watched.open(bad)
    watched.page.wait_for_timeout(200)
    assert any("kinhec.invalid" in u for u in watched.remote)
    assert any("boom" in e for e in watched.errors)
    with pytest.raises(AssertionError):
        watched.check_clean()


def test_calibration_page_written_by_kinhec_calibrate(watched, smoke_benchmarked, tmp_path):
    """``kinhec calibrate --report``: the page of a real calibration (a temporal sequence, offset estimated)."""
    from click.testing import CliRunner

    from kinhec.cli import main

    out, res_json = tmp_path / "calibration.html", tmp_path / "result.json"
    r = CliRunner().invoke(main, ["calibrate", "--dataset", str(smoke_benchmarked), "--sequence", "temporal-000001",
                                  "--json", str(res_json), "--report", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"written: {out}" in r.output
    result = json.loads(res_json.read_text())
    page = watched.page
    watched.open(out)
    _plot_ready(page, "#fig-residuals")
    assert result["verdict"] in page.text_content("#verdict")
    n_pts = page.evaluate("""() => document.querySelector('#fig-residuals').data
        .filter(t => t.yaxis === 'y').reduce((a, t) => a + t.x.length, 0)""")
    assert n_pts == result["n_pairs"]  # every pair drawn, inliers and outliers
    _plot_ready(page, "#fig-offset")
    x_line = page.evaluate("document.querySelector('#fig-offset')._fullLayout.shapes[0].x0")
    assert x_line == pytest.approx(1e3 * result["time_offset_s"])
    shot = tmp_path / "calibration_cli.png"
    page.screenshot(path=str(shot), full_page=True)
    assert_not_blank(shot)
    watched.check_clean()


def test_calibration_page_served_with_another_charset(browser, smoke_benchmarked, tmp_path):
    """A server whose header says UTF-8 overrides the page's windows-1252: the packed plotly.js read as text is
    then mangled, and the page reads its own bytes again instead (over http; from file:// the page's own
    charset always holds)."""
    seq = kinhec.load_sequence(smoke_benchmarked, "temporal-000001")
    body = write_calibration_report(calibration_result(seq, np.random.default_rng(5), estimate_offset=True),
                                    tmp_path / "calibration.html").read_bytes()  # fmt: skip
    url = "http://kinhec.test/calibration.html"
    served = []

    def serve(route):
        served.append(route.request.url)
        if route.request.url == url:
            route.fulfill(status=200, body=body, headers={"content-type": "text/html; charset=utf-8"})
        else:
            route.abort()

    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        ctx.route("**/*", serve)
        page.goto(url)
        _plot_ready(page, "#fig-residuals")
        assert page.evaluate("document.characterSet") == "UTF-8"
        assert served == [url, url] and errors == []  # the page, then its own bytes once
        # the JavaScript escapes of the page script hold whatever the charset: "≥" as written
        assert "≥ 2 deg" in page.text_content("#obs-table")
    finally:
        ctx.close()
