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

function plot(div, fig) {
  return Plotly.react(div, fig.data, fig.layout, PLOT_CONFIG);
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
      const cls = (c.text ? "text" : "") + (best[c.key] !== undefined && v === best[c.key] ? " best" : "");
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
    if (!drawn[name]) { drawn[name] = true; if (draw[name]) draw[name](); }
    else document.querySelectorAll("#view-" + name + " .js-plotly-plot").forEach((d) => Plotly.Plots.resize(d));
  }
  buttons.forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
  show(buttons[0].dataset.view);
  return show;
}
