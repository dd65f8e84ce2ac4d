/* The benchmark page: leaderboard, robustness curves, composition, sequences with a drill-down. */
(function () {
  const D = KINHEC;

  function options(select, values, labels) {
    select.innerHTML = "";
    values.forEach((v, i) => select.appendChild(el("option", { value: v, text: labels ? labels[i] : v })));
  }

  /* ------------------------------------------------------------ leaderboard */
  function drawLeaderboard() {
    const sel = document.getElementById("lb-track");
    const tracks = Object.keys(D.leaderboard.tracks);
    if (!tracks.length) return;
    options(sel, tracks);
    const table = new SortableTable(document.getElementById("leaderboard"), [], { sortKey: "X_rot_err_deg:oracle", sortDir: 1 });
    const modeNote = document.getElementById("lb-mode");
    function update() {
      const rows = D.leaderboard.tracks[sel.value];
      const shown = D.leaderboard.columns
        .filter((c) => ["solver", "n", "succ"].includes(c.key) || rows.some((r) => r[c.key] !== null && r[c.key] !== undefined));
      const modes = Array.from(new Set(shown.filter((c) => c.mode).map((c) => c.mode)));
      /* one synchronisation only: one header row, the mode said once above the table */
      const single = modes.length === 1;
      const b = (D.leaderboard.bounds || {})[sel.value] || {};
      const bounds = Object.keys(b).filter((k) => !single || k.endsWith(":" + modes[0]))
        .map((k) => {
          const [col, mode] = k.split(":"), parts = col.split("_crlb_");  /* X_rot_crlb_deg -> X rot 0.064 deg */
          return parts[0].replace(/_/g, " ") + (single ? "" : " (" + mode + ")") + " " + fmt(b[k]) + " " + (parts[1] || "");
        });
      modeNote.textContent = (single ? "synchronisation: " + modes[0] + " (every sequence of this track)" :
        "synchronisation: oracle and estimated side by side") +
        (bounds.length ? "; Cramér-Rao bound, median over the sequences: " + bounds.join(", ") : "");
      table.columns = shown.map((c) => Object.assign({}, c, {
        text: c.key === "solver", best: !!c.best,
        short: c.mode ? (single ? c.group : c.mode) : c.label, group: single ? "" : c.group,
      }));
      if (!table.columns.some((c) => c.key === table.sortKey)) { table.sortKey = "solver"; table.sortDir = 1; }
      table.setRows(rows);
    }
    sel.addEventListener("change", update);
    update();
  }

  /* ------------------------------------------------------------ robustness curves */
  function drawCurves() {
    const trackSel = document.getElementById("cv-track"), factorSel = document.getElementById("cv-factor");
    const box = document.getElementById("cv-solvers"), div = document.getElementById("curves");
    const tracks = Object.keys(D.curves);
    if (!tracks.length) return;
    options(trackSel, tracks);
    const chosen = new Set(D.solvers);
    D.solvers.forEach((s) => {
      const cb = el("input", { type: "checkbox", value: s });
      cb.checked = true;
      cb.addEventListener("change", () => { if (cb.checked) chosen.add(s); else chosen.delete(s); applySolvers(); });
      box.appendChild(el("label", {}, [cb, el("span", { class: "swatch", style: "background:" + D.colors[s] }), s]));
    });
    function applySolvers() {
      if (!div.data) return;
      Plotly.restyle(div, { visible: div.data.map((t) => chosen.has(t.legendgroup)) });
    }
    function drawFactor() {
      const curve = D.curves[trackSel.value][Number(factorSel.value)];
      const fig = JSON.parse(JSON.stringify(curve.figure));
      fig.data.forEach((t) => { t.visible = chosen.has(t.legendgroup); });
      plot(div, fig);
    }
    function drawTrack() {
      const list = D.curves[trackSel.value];
      options(factorSel, list.map((_, i) => String(i)), list.map((c) => c.label));
      drawFactor();
    }
    trackSel.addEventListener("change", drawTrack);
    factorSel.addEventListener("change", drawFactor);
    document.getElementById("cv-all").addEventListener("click", () => {
      box.querySelectorAll("input").forEach((cb) => { cb.checked = true; chosen.add(cb.value); });
      applySolvers();
    });
    document.getElementById("cv-none").addEventListener("click", () => {
      box.querySelectorAll("input").forEach((cb) => { cb.checked = false; chosen.delete(cb.value); });
      applySolvers();
    });
    drawTrack();
  }

  /* ------------------------------------------------------------ composition */
  function drawDataset() {
    const grid = document.getElementById("composition");
    D.composition.forEach((fig) => {
      const div = el("div", { class: "plot" });
      grid.appendChild(div);
      plot(div, fig);
    });
  }

  /* ------------------------------------------------------------ sequences and drill-down */
  const SEQ_COLUMNS = [
    { key: "id", label: "sequence", text: true }, { key: "track", label: "track", text: true },
    { key: "level", label: "level", text: true, wrap: true }, { key: "robot", label: "robot", text: true },
    { key: "configuration", label: "configuration", text: true }, { key: "family", label: "family", text: true },
    { key: "sync", label: "sync", text: true }, { key: "best", label: "best solver", text: true },
    { key: "best_rot", label: "best X rot [deg]" }, { key: "median_rot", label: "median X rot [deg]" },
    { key: "median_trans", label: "median X trans [mm]" }, { key: "status", label: "validation", text: true },
  ];
  const FILTERS = ["track", "robot", "configuration", "family"];

  function drawSequences() {
    const table = new SortableTable(document.getElementById("sequences"), SEQ_COLUMNS,
      { idKey: "id", sortKey: D.has_results ? "median_rot" : "id", sortDir: D.has_results ? -1 : 1, onRow: openSequence });
    const sels = {};
    FILTERS.forEach((f) => {
      const s = document.getElementById("sq-" + f);
      const vals = Array.from(new Set(D.sequences.map((r) => r[f]))).sort();
      options(s, [""].concat(vals), ["all"].concat(vals));
      s.addEventListener("change", update);
      sels[f] = s;
    });
    function update() {
      const rows = D.sequences.filter((r) => FILTERS.every((f) => !sels[f].value || r[f] === sels[f].value));
      document.getElementById("sq-count").textContent = rows.length + " of " + D.sequences.length + " sequences";
      table.setRows(rows);
    }
    update();
  }

  function line3d(pts, name, color, width, extra) {
    return Object.assign({
      type: "scatter3d", mode: "lines", name: name, x: pts.map((p) => p && p[0]), y: pts.map((p) => p && p[1]),
      z: pts.map((p) => p && p[2]), line: { color: color, width: width }, hoverinfo: "name",
    }, extra || {});
  }

  function sceneFigure(row, s) {
    const data = [];
    const cloud = [];
    if (s.arm) {
      const F = rowsOf(unpack(s.arm), 3);
      const per = F.length / s.arm_k;
      for (let k = 0; k < s.arm_k; k++) {
        const pts = F.slice(k * per, (k + 1) * per);
        data.push(line3d(pts, k === 0 ? "arm " + row.robot : "arm, later frame", "#555", k === 0 ? 9 : 4,
          { mode: "lines+markers", marker: { size: 3, color: "#f28e2b" }, opacity: k === 0 ? 1 : 0.35, showlegend: k < 2 }));
        pts.forEach((p) => cloud.push(p));
      }
    }
    const path = rowsOf(unpack(s.path), 3);
    path.forEach((p) => cloud.push(p));
    data.push(line3d(path, s.stations ? "flange at the stations" : "flange path", "#4c72b0", 4,
      s.stations ? { mode: "lines+markers", marker: { size: 3 }, line: { color: "#4c72b0", width: 2, dash: "dash" } } : {}));
    if (s.cams) {
      const C = rowsOf(unpack(s.cams), 3);
      const seg = [];
      for (let i = 0; i + 5 <= C.length; i += 5) {
        const a = C[i], c = C.slice(i + 1, i + 5);
        for (let j = 0; j < 4; j++) seg.push(a, c[j], null);
        seg.push(c[0], c[1], c[2], c[3], c[0], null);
      }
      data.push(line3d(seg, row.configuration === "eye_in_hand" ? "camera frustums" : "static camera", "#8c2d8c", 3));
      seg.forEach((p) => p && cloud.push(p));
    }
    if (s.ref) {
      const R = rowsOf(unpack(s.ref), 3);
      if (s.ref_kind === "vo") {
        data.push({ type: "scatter3d", mode: "markers", name: "VO origin (world)", x: [R[0][0]], y: [R[0][1]], z: [R[0][2]],
                    marker: { size: 6, color: "#e69f00", symbol: "diamond" } });
      } else {
        const x = [], y = [], z = [], i = [], j = [], k = [], edge = [];
        for (let q = 0; q + 4 <= R.length; q += 4) {
          R.slice(q, q + 4).forEach((p) => { x.push(p[0]); y.push(p[1]); z.push(p[2]); });
          i.push(q, q); j.push(q + 1, q + 2); k.push(q + 2, q + 3);
          edge.push(R[q], R[q + 1], R[q + 2], R[q + 3], R[q], null);
        }
        data.push({ type: "mesh3d", name: s.ref_kind === "board" ? "calibration board" : "marker on the flange",
                    x: x, y: y, z: z, i: i, j: j, k: k, color: "#e69f00", opacity: 0.6, showlegend: true, hoverinfo: "name" });
        data.push(line3d(edge, "board outline", "#333", 2, { showlegend: false }));
      }
      R.forEach((p) => cloud.push(p));
    }
    let ext = 0.2;
    for (let d = 0; d < 3; d++) {
      const v = cloud.map((p) => p[d]);
      ext = Math.max(ext, Math.max.apply(null, v) - Math.min.apply(null, v));
    }
    const L = 0.15 * ext;
    [["x", "#d62728"], ["y", "#2ca02c"], ["z", "#1f77b4"]].forEach(([a, c], n) => {
      const e = [0, 0, 0]; e[n] = L;
      data.push(line3d([[0, 0, 0], e], a + " axis of the base", c, 6, { showlegend: n === 0, name: "base frame (x red, y green, z blue)" }));
    });
    const ax = (t) => ({ title: { text: t }, backgroundcolor: "#f7f7f7", gridcolor: "#ddd", showbackground: true });
    return {
      data: data,
      layout: {
        title: { text: "Scene in the robot base frame (drag to rotate, scroll to zoom)", font: { size: 13 } },
        scene: { aspectmode: "data", xaxis: ax("x [m]"), yaxis: ax("y [m]"), zaxis: ax("z [m]"),
                 camera: { eye: { x: 1.4, y: -1.4, z: 0.9 } } },
        margin: { l: 0, r: 0, t: 40, b: 0 }, height: 480, legend: { x: 0, y: 1, bgcolor: "rgba(255,255,255,0.7)" },
        paper_bgcolor: "white",
      },
    };
  }

  function streamsFigure(row, s) {
    const rt = unpack(s.rt), rp = rowsOf(unpack(s.rp), 3), ct = unpack(s.ct), cp = rowsOf(unpack(s.cp), 3);
    const colors = ["#d62728", "#2ca02c", "#1f77b4"];
    const data = [];
    ["x", "y", "z"].forEach((a, d) => {
      data.push({ type: "scatter", mode: "lines", name: a, legendgroup: a, x: rt, y: rp.map((p) => p[d]),
                  line: { color: colors[d], width: 1.5 }, xaxis: "x", yaxis: "y" });
      data.push({ type: "scatter", mode: "lines+markers", name: a, legendgroup: a, showlegend: false, x: ct,
                  y: cp.map((p) => p[d]), line: { color: colors[d], width: 1 }, marker: { size: 3 }, connectgaps: false,
                  xaxis: "x2", yaxis: "y2" });
    });
    if (s.co.length) {
      const xs = [], ys = [];
      s.co.forEach((i) => [0, 1, 2].forEach((d) => { xs.push(ct[i]); ys.push(cp[i][d]); }));
      data.push({ type: "scatter", mode: "markers", name: "outlier (label)", x: xs, y: ys, xaxis: "x2", yaxis: "y2",
                  marker: { symbol: "x", size: 8, color: "#b00020" } });
    }
    const axis = (t, extra) => Object.assign({ title: { text: t }, gridcolor: "#e5e5e5", zeroline: false }, extra || {});
    return {
      data: data,
      layout: {
        title: { text: "The two streams, each on its own clock", font: { size: 13 } },
        xaxis: axis("robot clock [s]", { anchor: "y" }), yaxis: axis("robot: flange in base [m]", { domain: [0.58, 1] }),
        xaxis2: axis("camera clock [s]", { anchor: "y2" }), yaxis2: axis("camera: target in camera [m]", { domain: [0, 0.4] }),
        height: 480, margin: { l: 70, r: 10, t: 40, b: 45 }, legend: { orientation: "h", y: 0.5, x: 1, xanchor: "right", yanchor: "middle" },
        paper_bgcolor: "white", plot_bgcolor: "white",
      },
    };
  }

  function errorsFigure(row) {
    const data = [];
    ["oracle", "estimated"].forEach((mode) => {
      const res = row.results.filter((r) => r[1] === mode);
      if (!res.length) return;
      const color = mode === "oracle" ? "#4c72b0" : "#dd8452";
      data.push({ type: "bar", name: mode, legendgroup: mode, x: res.map((r) => r[0]), y: res.map((r) => r[2] ? r[3] : null),
                  marker: { color: color }, xaxis: "x", yaxis: "y" });
      data.push({ type: "bar", name: mode, legendgroup: mode, showlegend: false, x: res.map((r) => r[0]),
                  y: res.map((r) => r[2] ? r[4] : null), marker: { color: color }, xaxis: "x2", yaxis: "y2" });
    });
    const axis = (t, extra) => Object.assign({ title: { text: t }, gridcolor: "#e5e5e5" }, extra || {});
    return {
      data: data,
      layout: {
        title: { text: "Every solver's error on this sequence", font: { size: 13 } }, barmode: "group",
        xaxis: axis("", { domain: [0, 0.46], tickangle: -40 }),
        yaxis: logAxis("X rotation error [deg]", row.results.filter((r) => r[2]).map((r) => r[3])),
        xaxis2: axis("", { domain: [0.54, 1], tickangle: -40 }),
        yaxis2: logAxis("X translation error [mm]", row.results.filter((r) => r[2]).map((r) => r[4]), { anchor: "x2" }),
        height: 360, margin: { l: 60, r: 10, t: 40, b: 110 }, legend: { orientation: "h", y: 1.12, x: 1, xanchor: "right" },
        paper_bgcolor: "white", plot_bgcolor: "white",
      },
    };
  }

  const RES_COLUMNS = [
    { key: "solver", label: "solver", text: true }, { key: "mode", label: "synchronisation", text: true },
    { key: "ok", label: "estimate", text: true }, { key: "xr", label: "X rot [deg]", best: true },
    { key: "xt", label: "X trans [mm]", best: true }, { key: "yr", label: "Y rot [deg]" }, { key: "yt", label: "Y trans [mm]" },
    { key: "error", label: "message", text: true, wrap: true },
  ];

  function openSequence(row, tr) {
    document.querySelectorAll("#sequences tr.selected").forEach((r) => r.classList.remove("selected"));
    if (tr) tr.classList.add("selected");
    const s = D.scenes[row.id];
    const box = document.getElementById("drill");
    box.hidden = false;
    document.getElementById("drill-title").textContent =
      row.id + " \u2014 " + row.track + ", level " + row.level + ", " + row.robot + ", " + row.configuration.replace(/_/g, "-") +
      ", " + row.family + ", " + row.sync;
    const st = document.getElementById("drill-status");
    st.innerHTML = "";
    const cls = row.status.indexOf("passed") === 0 ? "status-ok" : row.status.indexOf("failed") === 0 ? "status-bad" : "status-none";
    st.appendChild(el("span", {}, ["validation: ", el("span", { class: cls, text: row.status })]));
    if (row.status === "not validated") st.appendChild(el("span", { class: "note", text: " (" + D.validation_hint + ")" }));
    const ul = document.getElementById("drill-findings");
    ul.innerHTML = "";
    row.findings.forEach((f) => ul.appendChild(el("li", { text: f[0] + " [" + f[1] + "] " + f[2] })));
    if (s) {
      plot(document.getElementById("seq-scene"), sceneFigure(row, s));
      plot(document.getElementById("streams"), streamsFigure(row, s));
    }
    const errDiv = document.getElementById("seq-errors");
    if (row.results.length) { errDiv.hidden = false; plot(errDiv, errorsFigure(row)); } else { errDiv.hidden = true; }
    const t = new SortableTable(document.getElementById("seq-results"), RES_COLUMNS, {});
    t.setRows(row.results.map((r) => ({ solver: r[0], mode: r[1], ok: r[2] ? "yes" : "no", xr: r[3], xt: r[4], yr: r[5], yt: r[6],
                                        error: r[7] || "" })));
    box.scrollIntoView({ behavior: "instant", block: "start" });
  }

  window.kinhecReport = { openSequence: (id) => openSequence(D.sequences.find((r) => r.id === id)) };
  setupTabs({ leaderboard: drawLeaderboard, curves: drawCurves, dataset: drawDataset, sequences: drawSequences });
})();
