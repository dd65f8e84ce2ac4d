/* Helpers shared by the kinhec report pages (plain JS, no dependencies besides the inlined plotly.js). */
"use strict";
const KINHEC = JSON.parse(document.getElementById("kinhec-data").textContent);

function fmt(v, digits) {
  if (v === null || v === undefined || (typeof v === "number" && !isFinite(v))) return "\u2013";
  if (typeof v !== "number") return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return Number(v.toPrecision(digits || 3)).toString();
}

function el(tag, attrs, children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children || []) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}

/* A log axis with every tick labelled by its whole value (0.05, not a bare "5"): the JavaScript twin of
   kinhec.report.figures.log_axis (1-2-5 ticks up to three decades, 1-ticks up to eight, then every other). */
function tickLabel(x) {
  const a = Math.abs(x);
  if (a >= 1e-4 && a < 1e5) return String(Number(x.toPrecision(4)));
  const [m, e] = x.toExponential(0).split("e");
  return m + "e" + Number(e);
}
function logAxis(title, values, extra) {
  const axis = Object.assign({ title: { text: title }, gridcolor: "#e5e5e5", zeroline: false, showline: true,
                               linecolor: "#888", automargin: true, type: "log" }, extra || {});
  const v = values.filter((x) => typeof x === "number" && isFinite(x) && x > 0);
  if (!v.length) return axis;
  const a = Math.log10(Math.min.apply(null, v)), b = Math.log10(Math.max.apply(null, v));
  const pad = Math.max(0.06 * (b - a), 0.08);
  let lo = a - pad, hi = b + pad;
  const span = hi - lo, mants = span < 3.2 ? [1, 2, 5] : [1], step = span <= 8.5 ? 1 : 2;
  let ticks = [];
  for (let e = Math.floor(lo); e <= Math.ceil(hi); e += step) {
    mants.forEach((m) => { const t = m * Math.pow(10, e), l = Math.log10(t); if (l >= lo && l <= hi) ticks.push(t); });
  }
  if (ticks.length < 2) {  /* less than a 1-2-5 step inside: widen to the neighbouring ticks */
    const near = [];
    for (let e = Math.floor(lo) - 1; e <= Math.ceil(hi); e++) [1, 2, 5].forEach((m) => near.push(m * Math.pow(10, e)));
    const tLo = Math.max.apply(null, near.filter((t) => Math.log10(t) <= a));
    const tHi = Math.min.apply(null, near.filter((t) => Math.log10(t) >= b));
    ticks = Array.from(new Set([tLo, tHi].concat(ticks))).sort((x, y) => x - y);
    lo = Math.min(lo, Math.log10(tLo) - 0.02); hi = Math.max(hi, Math.log10(tHi) + 0.02);
  }
  return Object.assign(axis, { range: [lo, hi], tickmode: "array", tickvals: ticks, ticktext: ticks.map(tickLabel) });
}

/* Decode an array packed by kinhec.report.sequences.pack (int16 quantised, base64). */
function unpack(p) {
  if (!p) return null;
  const bin = atob(p.q);
  const out = new Array(p.n);
  for (let i = 0; i < p.n; i++) {
    let c = bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
    if (c >= 32768) c -= 65536;
    out[i] = c === -32768 ? null : p.o + (c + 32767) * p.s;
  }
  return out;
}

/* Rows of a flat array with k columns: [[...], ...]. */
function rowsOf(flat, k) {
  const out = [];
  for (let i = 0; i + k <= flat.length; i += k) out.push(flat.slice(i, i + k));
  return out;
}

const PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["sendDataToCloud"] };

/* plotly.js is embedded gzip-compressed, its bytes written as they are in this windows-1252 page (one byte, one
   character), NUL, CR, "<" and "=" written as "=" and the byte plus 64 (kinhec.report.page.pack_bytes).  It is
   unpacked and run once, when the first figure is drawn, so the page shows its text and tables without parsing
   it first. */
function unescapeBytes(codes, n, byteOf) {  /* codes(i): the i-th character's code; byteOf: code -> byte */
  const out = new Uint8Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const b = byteOf(codes(i));
    out[k++] = b === 61 ? byteOf(codes(++i)) - 64 : b;
  }
  return out.subarray(0, k);
}
function packedBytes(packed) {
  if (document.characterSet.toLowerCase() === "windows-1252") {
    const table = new TextDecoder("windows-1252").decode(Uint8Array.from({ length: 256 }, (_, i) => i));
    const byteOf = new Uint8Array(65536);
    for (let b = 0; b < 256; b++) byteOf[table.charCodeAt(b)] = b;
    const text = packed.textContent;
    return Promise.resolve(unescapeBytes((i) => text.charCodeAt(i), text.length, (c) => byteOf[c]));
  }
  /* sent with another charset by a server (its header overrides the page's): read the file's own bytes */
  return fetch(location.href).then((r) => r.arrayBuffer()).then((buf) => {
    const all = new Uint8Array(buf);
    const tag = new TextEncoder().encode('id="kinhec-plotly"');
    let at = -1;
    for (let i = 0; at < 0 && i + tag.length <= all.length; i++) {
      if (all[i] === tag[0] && tag.every((t, j) => all[i + j] === t)) at = i;
    }
    if (at < 0) throw new Error("the packed plotting library is not in the file sent");
    const from = all.indexOf(62, at) + 1, to = all.indexOf(60, from);  /* ">" ... "<" */
    return unescapeBytes((i) => all[from + i], to - from, (c) => c);
  });
}

let plotlyLoading = null;
function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (plotlyLoading) return plotlyLoading;
  if (typeof DecompressionStream === "undefined") {
    return Promise.reject(new Error("this browser cannot unpack the plotting library (no DecompressionStream): " +
                                    "open the page in a current Chromium, Firefox or Safari"));
  }
  plotlyLoading = packedBytes(document.getElementById("kinhec-plotly")).then((bytes) => {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }).then((code) => {
    const s = document.createElement("script");
    s.textContent = code;
    document.head.appendChild(s);  /* an inline script runs on insertion */
    return window.Plotly;
  });
  return plotlyLoading;
}

function plot(div, fig) {
  return loadPlotly().then((P) => P.react(div, fig.data, fig.layout, PLOT_CONFIG)).catch((err) => {
    div.textContent = "figure not drawn: " + err.message;
    div.classList.add("plot-error");
    throw err;
  });
}

/* A sortable table: columns [{key, label, text?, group?}], rows [{...}]. Clicking a header sorts by it;
   a second click reverses the order.  Missing values always sort last. */
function SortableTable(table, columns, opts) {
  this.table = table;
  this.columns = columns;
  this.rows = [];
  this.opts = opts || {};
  this.sortKey = this.opts.sortKey || null;
  this.sortDir = this.opts.sortDir || 1;
}
SortableTable.prototype.setRows = function (rows) { this.rows = rows.slice(); this.render(); };
SortableTable.prototype.sortBy = function (key) {
  if (this.sortKey === key) this.sortDir = -this.sortDir; else { this.sortKey = key; this.sortDir = 1; }
  this.render();
};
SortableTable.prototype.sorted = function () {
  const key = this.sortKey, dir = this.sortDir;
  if (!key) return this.rows;
  const val = (r) => r[key];
  return this.rows.slice().sort((a, b) => {
    const x = val(a), y = val(b);
    const xm = x === null || x === undefined, ym = y === null || y === undefined;
    if (xm || ym) return xm === ym ? 0 : (xm ? 1 : -1);
    if (typeof x === "number" && typeof y === "number") return dir * (x - y);
    return dir * String(x).localeCompare(String(y), undefined, { numeric: true });
  });
};
SortableTable.prototype.render = function () {
  const self = this, t = this.table;
  t.innerHTML = "";
  const thead = el("thead");
  if (this.columns.some((c) => c.group)) {
    const tr = el("tr");
    let i = 0;
    while (i < this.columns.length) {
      const g = this.columns[i].group || "";
      let span = 1;
      while (i + span < this.columns.length && g && (this.columns[i + span].group || "") === g) span++;
      tr.appendChild(el("th", { colspan: String(span), class: g ? "group" : "", text: g }));
      i += span;
    }
    thead.appendChild(tr);
  }
  const tr = el("tr");
  for (const c of this.columns) {
    const th = el("th", { class: "sortable" + (c.text ? " text" : ""), "data-key": c.key, title: "sort by " + c.label,
                          text: c.short || c.label });
    if (c.key === this.sortKey) th.setAttribute("aria-sort", this.sortDir > 0 ? "ascending" : "descending");
    th.addEventListener("click", () => self.sortBy(c.key));
    tr.appendChild(th);
  }
  thead.appendChild(tr);
  t.appendChild(thead);
  const tbody = el("tbody");
  const best = {};
  for (const c of this.columns) {
    if (c.best) {
      const v = this.rows.map((r) => r[c.key]).filter((x) => typeof x === "number");
      if (v.length > 1) best[c.key] = Math.min.apply(null, v);
    }
  }
  for (const r of this.sorted()) {
    const row = el("tr", { "data-id": r[this.opts.idKey || this.columns[0].key] });
    for (const c of this.columns) {
      const v = r[c.key];
      const cls = (c.text ? "text" : "") + (c.wrap ? " wrap" : "") + (best[c.key] !== undefined && v === best[c.key] ? " best" : "");
      row.appendChild(el("td", { class: cls.trim(), text: c.text ? (v === null || v === undefined ? "\u2013" : String(v)) : fmt(v) }));
    }
    if (this.opts.onRow) {
      row.classList.add("clickable");
      row.addEventListener("click", () => self.opts.onRow(r, row));
    }
    tbody.appendChild(row);
  }
  t.appendChild(tbody);
};

/* Tabs: buttons with data-view; each view is drawn the first time it is shown. */
function setupTabs(draw) {
  const drawn = {};
  const buttons = document.querySelectorAll("nav button[data-view]");
  function show(name) {
    buttons.forEach((b) => b.classList.toggle("active", b.dataset.view === name));
    document.querySelectorAll("section.view").forEach((s) => s.classList.toggle("active", s.id === "view-" + name));
    if (!drawn[name]) { drawn[name] = true; return Promise.resolve(draw[name] ? draw[name]() : null); }
    document.querySelectorAll("#view-" + name + " .js-plotly-plot").forEach((d) => Plotly.Plots.resize(d));
    return Promise.resolve(null);
  }
  buttons.forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
  /* the first view drawn: body[data-ready] = "1" and data-ready-at = milliseconds since navigation started */
  show(buttons[0].dataset.view).then(() => {
    document.body.dataset.readyAt = String(Math.round(performance.now()));
    document.body.dataset.ready = "1";
    /* a first view without figures (the leaderboard): unpack plotly.js now, while the reader reads it */
    if (!window.Plotly) setTimeout(() => loadPlotly().catch(() => null), 250);
  });
  return show;
}
