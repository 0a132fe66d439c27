// poolsight dashboard: one script for every page. Each page reads its JSON API every few
// seconds and updates its tables and charts in place. Data reaches the page as text
// (textContent), never as HTML. The URL holds the state: source, pool, object, range.
"use strict";

const PAGES = { overview: "Overview", pool: "Pool", objects: "Objects", group: "Group", history: "History", checks: "Prediction checks", advice: "Advice", backups: "Backups", purescale: "pureScale", memory: "Memory", writes: "Writes", health: "Data health" };
const STATISTICS_PAGES = ["backups", "purescale", "memory", "writes"];
const RANGES = ["15m", "1h", "6h", "24h", "7d", "30d", "90d", "1y"];
const page = location.pathname.replace(/^\/+|\/+$/g, "") || "overview";
const params = new URLSearchParams(location.search);
const REFRESH_MS = Math.max(1000, Number(params.get("refresh")) || 5000);
const charts = {};
let refreshes = 0;
let timer = null;

// ---------------------------------------------------------------- helpers

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function num(v, digits = 0) {
  if (v === null || v === undefined || Number.isNaN(v)) return "-";
  return Number(v).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
const pct = (v, digits = 1) => (v === null || v === undefined ? "-" : num(100 * v, digits) + " %");
const signedPct = (v) => (v === null || v === undefined ? "-" : (v >= 0 ? "+" : "") + num(100 * v, 1) + " %");
function time(v) {
  if (!v) return "-";
  return v.replace("T", " ").replace(/\.\d+/, "").replace("Z", "Z");
}
function age(seconds) {
  if (seconds === null || seconds === undefined) return "-";
  const s = Math.abs(seconds);
  const text = s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : s < 172800 ? `${(s / 3600).toFixed(1)} h` : `${(s / 86400).toFixed(1)} d`;
  return seconds < 0 ? `in ${text}` : text;
}

function link(path, extra, text) {
  const p = new URLSearchParams();
  for (const k of ["source", "pool", "range", "group", "gbp"]) if (params.get(k)) p.set(k, params.get(k));
  for (const [k, v] of Object.entries(extra || {})) if (v === null) p.delete(k); else p.set(k, v);
  return el("a", { href: `/${path}?${p}`, text });
}

function setParam(k, v) {
  if (v === null || v === "") params.delete(k); else params.set(k, v);
  history.replaceState(null, "", `${location.pathname}?${params}`);
  buildNav();
  refresh();
}

async function api(name, extra) {
  const p = new URLSearchParams(params);
  p.delete("refresh");
  for (const [k, v] of Object.entries(extra || {})) p.set(k, v);
  const r = await fetch(`/api/${name}?${p}`);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

function card(id, title, note, wide) {
  let c = document.getElementById(id);
  if (!c) {
    c = el("section", { id, class: "card" + (wide ? " wide" : "") }, el("h2", { text: title }));
    if (note) c.append(el("p", { class: "note", text: note }));
    document.getElementById("main").append(c);
  }
  return c;
}

function chart(parent, id, height) {
  if (!charts[id]) {
    const div = el("div", { id, class: "chart" });
    if (height) div.style.height = `${height}px`;
    // The chart's data: the page's API answer (dashboards/README.md lists the endpoints).
    parent.append(el("div", { class: "tools" }, el("a", { class: "json", "data-json": id, target: "_blank", text: "JSON" })), div);
    charts[id] = echarts.init(div, null, { renderer: "canvas" });
  }
  const q = new URLSearchParams(params);
  q.delete("refresh");
  document.querySelector(`[data-json="${id}"]`).href = `/api/${page}?${q}`;  // the range now shown
  return charts[id];
}
window.addEventListener("resize", () => Object.values(charts).forEach((c) => c.resize()));

// A CSV cell: quoted when it holds a quote, comma or line break; a text starting like a formula
// (= + - @) gets a leading ' so that a spreadsheet shows it instead of running it.
function csvCell(v) {
  if (v === null || v === undefined) return "";
  let s = typeof v === "object" ? JSON.stringify(v) : String(v);
  if (typeof v === "string" && /^[=+\-@]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

// The table's rows as shown (sorted), every column's raw value under its key (the API's and the
// views' names), as a file: what the analyst pastes into a spreadsheet.
function downloadCsv(id) {
  const w = document.getElementById(id);
  const lines = [w._columns.map((c) => c.key), ...w._rows.map((r) => w._columns.map((c) => csvCell(r[c.key])))];
  const blob = new Blob([lines.map((l) => l.join(",")).join("\r\n") + "\r\n"], { type: "text/csv" });
  const a = el("a", { href: URL.createObjectURL(blob), download: `${page}-${id}.csv` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// A sortable table. columns: [{key, label, fmt, text, cls}]; the sort survives refreshes.
const sorts = {};
function table(parent, id, columns, rows, defaultSort) {
  let wrap = document.getElementById(id);
  if (!wrap) {
    wrap = el("div", { id, class: "scroll" });
    const csv = el("button", { class: "csv", "data-csv": id, title: "download the table's rows as CSV", text: "CSV", onclick: () => downloadCsv(id) });
    parent.append(el("div", { class: "tools" }, csv), wrap);
  }
  const sort = sorts[id] || (sorts[id] = { key: defaultSort ? defaultSort.key : null, asc: defaultSort ? !!defaultSort.asc : false });
  const sorted = [...rows];
  if (sort.key) {
    sorted.sort((a, b) => {
      const x = a[sort.key], y = b[sort.key];
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * (sort.asc ? 1 : -1);
    });
  }
  const head = el("tr", {}, ...columns.map((c) => {
    const th = el("th", { text: c.label, class: (c.text ? "text " : "") + (sort.key === c.key ? "sorted" + (sort.asc ? " asc" : "") : ""), "data-col": c.key, title: c.title || null });
    th.addEventListener("click", () => {
      sort.asc = sort.key === c.key ? !sort.asc : !!c.text;
      sort.key = c.key;
      table(parent, id, columns, rows, defaultSort);
    });
    return th;
  }));
  const body = sorted.map((r) => el("tr", { "data-key": r._key || null }, ...columns.map((c) => {
    const v = r[c.key];
    const content = c.render ? c.render(r) : (c.fmt ? c.fmt(v, r) : (v ?? "-"));
    const td = el("td", { class: (c.text ? "text " : "") + (c.cls ? c.cls(v, r) || "" : ""), "data-col": c.key, "data-value": v === null || v === undefined ? "" : String(v) });
    td.append(content instanceof Node ? content : document.createTextNode(String(content)));
    return td;
  })));
  wrap.replaceChildren(el("table", {}, el("thead", {}, head), el("tbody", {}, ...body)));
  wrap._columns = columns;
  wrap._rows = sorted;
}

function kv(parent, id, pairs) {
  let dl = document.getElementById(id);
  if (!dl) { dl = el("dl", { id, class: "kv" }); parent.append(dl); }
  // A value is text, or an element (a link).
  dl.replaceChildren(...pairs.flatMap(([k, v, key]) => [el("dt", { text: k }), v instanceof Node ? el("dd", { "data-key": key || null }, v) : el("dd", { text: v, "data-key": key || null })]));
}

const series = (rows, key) => rows.map((r) => [r.t, r[key] ?? null]);
// yName "%": the lines are ratios (0-1), shown in % on the axis and in the tooltip, as the tables show them.
function timeChart(c, legend, lines, yName, extra) {
  const ratio = yName === "%";
  c.setOption({
    animation: false,
    tooltip: { trigger: "axis", ...(ratio ? { valueFormatter: (v) => pct(v, 2) } : {}) },
    legend: { data: legend && legend.length ? legend : lines.map((l) => l.name), top: 0 },
    grid: { left: 60, right: 60, top: 30, bottom: 30 },
    xAxis: { type: "time" },
    yAxis: [{ type: "value", name: yName, scale: true, ...(ratio ? { axisLabel: { formatter: (v) => pct(v, 0) } } : {}) }, ...(extra || [])],
    // Down-sampled to the pixels there are (a day of 1-minute panes is 1,440 points a line).
    series: lines.map((l) => ({ sampling: "lttb", ...l })),
  }, { notMerge: true });
}

// ---------------------------------------------------------------- header

function buildNav() {
  const nav = document.getElementById("nav");
  nav.replaceChildren(...Object.entries(PAGES).map(([p, label]) => {
    const a = link(p, {}, label);
    if (p === page || (p === "objects" && page === "object")) a.className = "active";
    return a;
  }));
}

let poolList = null;
let groupList = null;
async function buildControls() {
  const box = document.getElementById("controls");
  box.replaceChildren();
  let rangeSelect = null;
  if (["pool", "objects", "object", "checks", "group", ...STATISTICS_PAGES].includes(page)) {
    rangeSelect = el("select", { id: "range-select", "aria-label": "range", onchange: (e) => setParam("range", e.target.value) });
    for (const r of RANGES) rangeSelect.append(el("option", { value: r, text: `last ${r}` }));
    rangeSelect.value = params.get("range") || "1h";
    box.append(rangeSelect);
  }
  if (["pool", "objects", "object", "history", "checks"].includes(page)) {
    if (!poolList) {
      try { poolList = (await api("pools")).pools; } catch (e) { poolList = []; }
    }
    const sel = el("select", { id: "pool-select", "aria-label": "pool", onchange: (e) => {
      const [s, p] = JSON.parse(e.target.value);
      params.set("source", s);
      params.delete("object");
      setParam("pool", p);
    } });
    const current = JSON.stringify([params.get("source"), params.get("pool")]);
    const options = poolList.map((r) => JSON.stringify([r.source, r.pool]));
    if (!options.includes(current)) options.unshift(current);
    for (const o of options) {
      const [s, p] = JSON.parse(o);
      sel.append(el("option", { value: o, text: s ? `${s} / ${p}` : "(choose a pool)" }));
    }
    sel.value = current;
    box.prepend(sel);
  }
  if (page === "group") {
    if (!groupList) {
      try { groupList = (await api("groups")).groups; } catch (e) { groupList = []; }
    }
    const sel = el("select", { id: "group-select", "aria-label": "group buffer pool", onchange: (e) => {
      const [g, b] = JSON.parse(e.target.value);
      params.set("group", g);
      setParam("gbp", b);
    } });
    const current = JSON.stringify([params.get("group"), params.get("gbp")]);
    const options = groupList.map((r) => JSON.stringify([r.group_name, r.gbp]));
    if (!options.includes(current)) options.unshift(current);
    for (const o of options) {
      const [g, b] = JSON.parse(o);
      sel.append(el("option", { value: o, text: g ? `${g} / ${b}` : "(choose a group buffer pool)" }));
    }
    sel.value = current;
    box.prepend(sel);
  }
}

// ---------------------------------------------------------------- pages

const RENDER = {};

RENDER.overview = async () => {
  const d = await api("overview");
  poolList = d.pools;
  if (d.subsystems && d.subsystems.length) {
    const sc = card("subsystems", "Subsystems", "Each source at its newest statistics interval: buffers and memory per page size, the pools' rates added up, hit ratios from the summed counters (poolsight report SOURCE prints the same with each pool's share).", true);
    for (const r of d.subsystems) r._key = r.source;
    table(sc, "subsystems-table", [
      { key: "source", label: "Source", text: true },
      { key: "period_end", label: "Interval end", text: true, fmt: time },
      { key: "pools", label: "Pools", fmt: (v) => num(v) },
      { key: "buffers_4k", label: "4K buffers", fmt: (v) => num(v) },
      { key: "buffers_8k", label: "8K buffers", fmt: (v) => num(v) },
      { key: "buffers_16k", label: "16K buffers", fmt: (v) => num(v) },
      { key: "buffers_32k", label: "32K buffers", fmt: (v) => num(v) },
      { key: "memory_mb", label: "Memory MB", fmt: (v) => num(v) },
      { key: "getpages_per_s", label: "Getpages/s", fmt: (v) => num(v) },
      { key: "sync_reads_per_s", label: "Sync reads/s", fmt: (v) => num(v, 1) },
      { key: "prefetch_pages_per_s", label: "Prefetch pages/s", fmt: (v) => num(v, 1) },
      { key: "application_hit_ratio", label: "App hit", title: "statistics: 1 - sync reads / getpages, over every pool", fmt: (v) => pct(v) },
      { key: "system_hit_ratio", label: "System hit", title: "statistics: 1 - (sync reads + prefetched pages) / getpages, over every pool", fmt: (v) => pct(v) },
    ], d.subsystems, { key: "sync_reads_per_s" });
  }
  const c = card("pools", "Buffer pools", "Each pool at its newest pane: measured (the trace's misses) and simulated sync reads at the current size, statistics hit ratios, what doubling the pool saves.", true);
  for (const r of d.pools) r._key = `${r.source}/${r.pool}`;
  table(c, "pools-table", [
    { key: "source", label: "Source", text: true },
    { key: "pool", label: "Pool", text: true, render: (r) => link("pool", { source: r.source, pool: r.pool }, r.pool) },
    { key: "vpsize", label: "VPSIZE", fmt: (v) => num(v) },
    { key: "getpages_per_s", label: "Getpages/s", fmt: (v) => num(v) },
    { key: "measured_sync_reads_per_s", label: "Sync reads/s", title: "measured: random getpages the trace reported as misses", fmt: (v) => num(v, 1) },
    { key: "simulated_sync_reads_per_s", label: "Simulated/s", fmt: (v) => num(v, 1) },
    { key: "accuracy_error_ratio", label: "Sim error", fmt: signedPct, cls: (v) => (v !== null && v !== undefined && Math.abs(v) > 0.1 ? "bad" : "") },
    { key: "application_hit_ratio", label: "App hit", title: "statistics: (getpages - sync reads) / getpages", fmt: (v) => pct(v) },
    { key: "system_hit_ratio", label: "System hit", title: "statistics: (getpages - pages read) / getpages; negative: prefetch reads pages nobody uses", fmt: (v) => (v !== null && v !== undefined && v < 0 ? "⚠ " : "") + pct(v), cls: (v) => (v !== null && v !== undefined && v < 0 ? "bad" : "") },
    { key: "trace_hit_ratio", label: "Trace hit", fmt: (v) => pct(v) },
    { key: "saved_sync_reads_per_s_2x", label: "Saved I/O/s @2x", fmt: (v) => num(v, 1) },
    { key: "freshness_s", label: "Data age", title: "wall clock minus the end of the newest pane", fmt: age, cls: (v) => (v > 600 ? "warn" : "") },
    { key: "open_alerts", label: "Alerts", fmt: (v) => num(v), cls: (v) => (v > 0 ? "bad" : "") },
  ], d.pools, { key: "measured_sync_reads_per_s" });
  renderAlerts(card("alerts", "Alerts", "Open alerts and those of the last 24 h (rules: dashboards/alert_rules.yaml).", true), d.alerts);
};

function renderAlerts(c, alerts) {
  for (const a of alerts) a._key = a.alert_id;
  table(c, "alerts-table", [
    { key: "state", label: "State", text: true, render: (r) => el("span", { class: `pill ${r.state}`, text: r.state }) },
    { key: "severity", label: "Severity", text: true, render: (r) => el("span", { class: `pill ${r.severity}`, text: r.severity || "-" }) },
    { key: "rule", label: "Rule", text: true },
    { key: "source", label: "Source", text: true },
    { key: "pool", label: "Pool", text: true, render: (r) => (r.subject === "gbp_stats" ? link("group", { group: r.source, gbp: r.pool }, r.pool) : (r.pool ?? "-")) },
    { key: "message", label: "Message", text: true },
    // A pool's statistics warning names the advice that addresses it: the Advice page, at that pool.
    { key: "subject", label: "Advice", text: true, render: (r) => ((r.subject || "").startsWith("pool_stats") ? link("advice", { source: r.source, pool: r.pool }, "advice") : "") },
    { key: "opened_at", label: "Opened", text: true, fmt: time },
    { key: "resolved_at", label: "Resolved", text: true, fmt: time },
  ], alerts, { key: "opened_at" });
}

function interpolate(curve, size) {
  // Linear between the simulated sizes; the view's own values at each simulated size.
  const keys = ["sync_reads_per_s", "hit_ratio", "avoided_sync_reads_per_s", "cpu_seconds_saved_per_24h", "elapsed_seconds_saved_per_24h", "prefetch_pages_per_s"];
  let i = curve.findIndex((r) => r.size_pages >= size);
  if (i < 0) i = curve.length - 1;
  const hi = curve[i], lo = curve[Math.max(0, i - 1)];
  const f = hi.size_pages === lo.size_pages ? 1 : (size - lo.size_pages) / (hi.size_pages - lo.size_pages);
  const out = { size_pages: size };
  // At a simulated size the view's value itself: lo + 1 * (hi - lo) may be an ulp off hi, and
  // shown rounded that can be the next integer.
  const at = (k) => (f === 1 ? hi[k] : f === 0 ? lo[k] : lo[k] + f * (hi[k] - lo[k]));
  for (const k of keys) out[k] = lo[k] === null || hi[k] === null ? null : at(k);
  return out;
}

function whatIf(c, curve) {
  let box = document.getElementById("whatif");
  const sizes = curve.map((r) => r.size_pages);
  const current = curve.find((r) => r.is_current) || curve[0];
  if (!box) {
    box = el("div", { id: "whatif" },
      el("div", { class: "whatif" },
        el("label", { for: "whatif-size", text: "Pool size (buffers)" }),
        el("input", { id: "whatif-range", type: "range", "aria-label": "what-if size slider" }),
        el("input", { id: "whatif-size", type: "number", style: "width:110px" })),
      el("div", { class: "readout", id: "whatif-readout" }));
    c.append(box);
    const range = box.querySelector("#whatif-range"), input = box.querySelector("#whatif-size");
    range.addEventListener("input", () => { input.value = range.value; showWhatIf(); });
    input.addEventListener("change", () => { range.value = input.value; showWhatIf(); });
    range.min = Math.min(...sizes);
    range.max = Math.max(...sizes);
    range.step = 1;
    range.value = input.value = current.size_pages;
  }
  const range = box.querySelector("#whatif-range");
  range.min = Math.min(...sizes);
  range.max = Math.max(...sizes);
  whatIf.curve = curve;
  showWhatIf();
}

function showWhatIf() {
  const curve = whatIf.curve;
  const input = document.getElementById("whatif-size");
  const lo = curve[0].size_pages, hi = curve[curve.length - 1].size_pages;
  const size = Math.min(hi, Math.max(lo, Number(input.value)));
  const v = interpolate(curve, size);
  const items = [
    ["whatif-sync", num(v.sync_reads_per_s, 1), "sync reads/s at this size"],
    ["whatif-saved", num(v.avoided_sync_reads_per_s, 1), "sync I/O/s saved vs current"],
    ["whatif-cpu", num(v.cpu_seconds_saved_per_24h, 1), "CPU s saved per 24 h"],
    ["whatif-elapsed", num(v.elapsed_seconds_saved_per_24h, 0), "elapsed s saved per 24 h"],
    ["whatif-hit", pct(v.hit_ratio, 2), "hit ratio"],
  ];
  document.getElementById("whatif-readout").replaceChildren(...items.map(([id, value, label]) => el("div", {}, el("b", { id, text: value }), el("span", { text: label }))));
  const c = charts["curve-chart"];
  if (c) c.setOption({ series: [{ id: "whatif", type: "line", data: [], markLine: { silent: true, symbol: "none", label: { show: false }, lineStyle: { color: "#1f6feb", type: "dotted" }, data: [{ xAxis: size }] } }] });
}

// DB2's own simulated pool (SPSIZE, DSNB431I/432I) beside the simulation at VPSIZE + SPSIZE, per
// statistics interval (the view spsize_check): shown only for a pool that has one.
function spsizeCard(d) {
  const rows = d.spsize_check || [];
  const old = document.getElementById("spsize");
  if (!rows.length) { if (old) old.remove(); return; }
  const c = old || card("spsize", "DB2's simulated pool (SPSIZE) against the simulation", "Sync reads of random getpages a pool of VPSIZE + SPSIZE buffers would have avoided, per statistics interval: DB2's count (DSNB432I) and the simulation's curve at that size.");
  if (!old) document.getElementById("accuracy").after(c);
  const last = rows[rows.length - 1];
  const sum = (k) => rows.reduce((s, r) => s + (r[k] ?? 0), 0);
  const db2 = sum("db2_avoidable_sync_reads"), sim = sum("simulated_avoidable_sync_reads");
  kv(c, "spsize-kv", [
    ["SPSIZE (buffers)", `${num(last.spsize)} (simulated pool of ${num(d.attributes.vpsize + last.spsize)})`, "spsize"],
    ["Newest interval end", time(last.t), "spsize_interval"],
    ["DB2 avoidable sync reads", num(last.db2_avoidable_sync_reads), "db2_avoidable_sync_reads"],
    ["Simulated avoidable sync reads", num(last.simulated_avoidable_sync_reads, 1), "simulated_avoidable_sync_reads"],
    ["Error (simulated / DB2 - 1)", signedPct(last.error_ratio), "error_ratio"],
    [`Over the range (${rows.length} intervals): DB2 / simulated`, `${num(db2)} / ${num(sim, 1)} (${signedPct(db2 ? sim / db2 - 1 : null)})`, "range"],
  ]);
}

function settingsPairs(st) {
  if (!st || !st.settings_at) return [["Other settings", "none sent (no statistics for this pool)", "settings"]];
  const frame = { 4096: "4K", 1048576: "1M", 2147483648: "2G" };
  return [
    ["PGSTEAL", st.pgsteal || "-", "pgsteal"], ["PGFIX", st.pgfix === null ? "-" : (st.pgfix ? "YES" : "NO"), "pgfix"],
    ["DWQT", st.dwqt === null ? "-" : `${num(st.dwqt)} %`, "dwqt"], ["VDWQT", st.vdwqt === null ? "-" : `${num(st.vdwqt)} %`, "vdwqt"],
    ["Page size", st.page_size ? `${num(st.page_size / 1024)}K` : "-", "page_size"],
    ["Frame size", st.frame_size ? (frame[st.frame_size] || num(st.frame_size)) : "-", "frame_size"],
    ["SPSIZE", st.spsize === null ? "-" : num(st.spsize), "spsize"],
  ];
}

RENDER.pool = async () => {
  if (!params.get("source") || !params.get("pool")) { emptyPage("Choose a pool above, or open one from the overview."); return; }
  const d = await api("pool");
  const a = d.attributes;
  const attrs = card("attributes", `${d.source} / ${d.pool}`, "Pool attributes and the simulation's model.");
  kv(attrs, "attributes-kv", [
    ["VPSIZE (buffers)", num(a.vpsize), "vpsize"], ["VPSEQT", a.vpseqt === null ? "-" : `${num(a.vpseqt)} %`, "vpseqt"],
    // Every other setting the collectors sent, from the newest statistics interval.
    ...settingsPairs(d.settings),
    ["Model", a.model || "-", "model"], ["Model sampling", a.model_sampling_rate === null ? "-" : num(a.model_sampling_rate, 4), "model_sampling_rate"],
    ["Stack mode", `${a.mode || "-"} (rate ${num(a.sampling_rate, 4)})`, "mode"], ["Window", `${num(a.window_panes)} panes`, "window_panes"],
    ["Panes", num(a.panes), "panes"], ["Newest pane end", time(a.latest_pane_end), "latest_pane_end"],
    ["CPU per sync read", a.cpu_us_per_sync_read === null ? "-" : `${num(a.cpu_us_per_sync_read)} µs`, "cpu_us_per_sync_read"],
    ["Sync read time", d.curve.length ? `${num(d.curve[0].sync_read_ms, 2)} ms (${d.curve[0].sync_read_ms_from || "-"})` : "-", "sync_read_ms"],
    // A data-sharing member's pool: its group buffer pool's page.
    ...(d.groups && d.groups.length ? [["Group buffer pool", el("span", {}, ...d.groups.flatMap((g, i) => [i ? ", " : "", link("group", { group: g.group_name, gbp: g.gbp }, `${g.group_name} / ${g.gbp}`)])), "group"]] : []),
  ]);
  const acc = card("accuracy", "Simulation against measurement", "The simulation at the pool's own settings against the sync reads the pool measured.");
  const m = d.measured_at_current, cur = d.curve.find((r) => r.is_current);
  kv(acc, "accuracy-kv", [
    ["Simulated at current size (curve window)", cur ? num(cur.sync_reads_per_s, 2) + " /s" : "-", "curve_simulated"],
    ["Measured over the same window", m ? num(m.measured_sync_reads_per_s, 2) + " /s" : "-", "curve_measured"],
    ["Latest accuracy window", d.accuracy ? `${time(d.accuracy.window_start)} – ${time(d.accuracy.window_end)} (${d.accuracy.measured_from})` : "-", "accuracy_window"],
    ["Simulated / measured", d.accuracy ? `${num(d.accuracy.simulated_sync_reads_per_s, 2)} / ${num(d.accuracy.measured_sync_reads_per_s, 2)} per s` : "-", "accuracy_values"],
    ["Error", d.accuracy ? signedPct(d.accuracy.error_ratio) : "-", "accuracy_error"],
  ]);
  spsizeCard(d);
  const cc = card("curve", "Sim graph: sync reads and prefetch against pool size", d.curve.length ? `Window ${time(d.curve[0].window_start)} – ${time(d.curve[0].window_end)}, ${d.curve[0].panes} panes at the pool's policy; ◆ measured at the current size.` : "No curve yet.", true);
  if (d.curve.length) {
    chart(cc, "curve-chart", 320).setOption({
      animation: false,
      tooltip: { trigger: "axis" },
      legend: { data: ["sync reads/s", "prefetch pages/s", "measured sync reads/s"], top: 0 },
      grid: { left: 70, right: 70, top: 30, bottom: 40 },
      xAxis: { type: "value", name: "buffers", scale: true },
      yAxis: [{ type: "value", name: "sync reads/s" }, { type: "value", name: "prefetch pages/s" }],
      series: [
        { id: "sync", name: "sync reads/s", type: "line", data: d.curve.map((r) => [r.size_pages, r.sync_reads_per_s]),
          markLine: cur ? { symbol: "none", label: { formatter: "current" }, data: [{ xAxis: cur.size_pages }] } : undefined },
        { id: "prefetch", name: "prefetch pages/s", type: "line", yAxisIndex: 1, data: d.curve.map((r) => [r.size_pages, r.prefetch_pages_per_s]) },
        { id: "measured", name: "measured sync reads/s", type: "scatter", symbol: "diamond", symbolSize: 14, data: cur && m ? [[cur.size_pages, m.measured_sync_reads_per_s]] : [] },
      ],
    });
    whatIf(cc, d.curve);
  }
  const s = d.series;
  const io = card("io", "Sync reads/s: measured and simulated (predicted) per pane", "Measured: the trace's random misses; statistics: the pool's reported sync reads.");
  timeChart(chart(io, "io-chart"), ["measured", "simulated", "statistics"], [
    { name: "measured", type: "line", showSymbol: false, data: series(s, "measured_sync_reads_per_s") },
    { name: "simulated", type: "line", showSymbol: false, lineStyle: { type: "dashed" }, data: series(s, "simulated_sync_reads_per_s") },
    { name: "statistics", type: "line", step: "end", showSymbol: false, data: series(d.stats_series, "sync_reads_per_s") },
  ], "reads/s");
  const hr = card("hit", "Hit ratios", "Random getpages: measured (the trace's misses) and simulated at the current size; statistics: application and system hit ratio.");
  timeChart(chart(hr, "hit-chart"), ["random, measured", "random, simulated", "application (stats)", "system (stats)"], [
    { name: "random, measured", type: "line", showSymbol: false, data: series(s, "measured_random_hit_ratio") },
    { name: "random, simulated", type: "line", showSymbol: false, lineStyle: { type: "dashed" }, data: series(s, "simulated_random_hit_ratio") },
    { name: "application (stats)", type: "line", step: "end", showSymbol: false, data: series(d.stats_series, "application_hit_ratio") },
    { name: "system (stats)", type: "line", step: "end", showSymbol: false, data: series(d.stats_series, "system_hit_ratio") },
  ], "%");
  const ws = card("ws", "Working set", "Pages referenced within the simulation window, and per pane; VPSIZE for scale.");
  timeChart(chart(ws, "ws-chart"), ["working set", "pages per pane", "VPSIZE"], [
    { name: "working set", type: "line", showSymbol: false, data: series(s, "working_set_pages") },
    { name: "pages per pane", type: "line", showSymbol: false, data: series(s, "distinct_pages") },
    { name: "VPSIZE", type: "line", step: "end", showSymbol: false, lineStyle: { type: "dotted" }, data: series(s, "current_size") },
  ], "pages");
  const mix = card("mix", "Access mix", d.mix && d.mix.getpages ? `Over the range: random ${pct(d.mix.random / d.mix.getpages)}, sequential ${pct(d.mix.sequential / d.mix.getpages)}, list ${pct(d.mix.list / d.mix.getpages)}.` : "No getpages in the range.");
  mix.querySelector(".note").textContent = d.mix && d.mix.getpages ? `Over the range: random ${pct(d.mix.random / d.mix.getpages)}, sequential ${pct(d.mix.sequential / d.mix.getpages)}, list ${pct(d.mix.list / d.mix.getpages)}.` : "No getpages in the range.";
  timeChart(chart(mix, "mix-chart"), ["random", "sequential", "list"], ["random", "sequential", "list"].map((k) => ({
    name: k, type: "line", stack: "mix", areaStyle: {}, showSymbol: false, data: series(s, `${k}_per_s`),
  })), "getpages/s");
};

RENDER.objects = async () => {
  if (!params.get("source") || !params.get("pool")) { emptyPage("Choose a pool above."); return; }
  const d = await api("objects");
  const c = card("objects", `Objects of ${d.source} / ${d.pool} by I/O cost`, d.window ? `${time(d.window.start)} – ${time(d.window.end)}. Sync I/O, CPU and delay from the simulation at the current size priced with measured I/O times (object_io_cost); traced: the I/O events.` : "No data in the range.", true);
  for (const r of d.objects) r._key = r.object;
  table(c, "objects-table", [
    { key: "object", label: "Object", text: true, render: (r) => link("object", { object: r.object }, r.object) },
    { key: "access_class", label: "Class", text: true },
    { key: "sequential_share", label: "Seq share", fmt: (v) => pct(v) },
    { key: "getpages_per_s", label: "Getpages/s", fmt: (v) => num(v, 1) },
    { key: "sync_ios_per_s", label: "Sync I/O/s", fmt: (v) => num(v, 2) },
    { key: "traced_sync_ios_per_s", label: "Traced I/O/s", fmt: (v) => num(v, 2) },
    { key: "cpu_seconds_per_24h", label: "CPU s/24h", fmt: (v) => num(v, 1) },
    { key: "delay_seconds_per_24h", label: "Delay s/24h", fmt: (v) => num(v, 0) },
    { key: "share_of_pool_sync_reads", label: "Share of pool", title: "share of the pool's simulated sync reads at its current size", fmt: (v) => pct(v) },
    { key: "ws_avg", label: "WS avg", fmt: (v) => num(v) },
    { key: "ws_max", label: "WS max", fmt: (v) => num(v) },
    { key: "ws_change", label: "WS change/pane", fmt: (v) => num(v) },
  ], d.objects, { key: "sync_ios_per_s" });
  const top = [...d.objects].sort((x, y) => (y.share_of_pool_sync_reads || 0) - (x.share_of_pool_sync_reads || 0)).slice(0, 15).reverse();
  const sc = card("share", "Share of the pool's sync reads", "Top objects by their part of the pool's simulated sync reads at the current size.", true);
  chart(sc, "share-chart", Math.max(200, 24 * top.length + 60)).setOption({
    animation: false, tooltip: {}, grid: { left: 180, right: 40, top: 10, bottom: 30 },
    xAxis: { type: "value", axisLabel: { formatter: (v) => `${Math.round(v * 100)} %` } },
    yAxis: { type: "category", data: top.map((r) => r.object) },
    series: [{ type: "bar", data: top.map((r) => r.share_of_pool_sync_reads || 0) }],
  }, { notMerge: true });
};

RENDER.object = async () => {
  if (!params.get("object")) { emptyPage("Choose an object on the Objects page."); return; }
  const d = await api("object");
  const s = d.series;
  const c = card("object-io", `${d.object} in ${d.source} / ${d.pool}`, "Sync reads/s simulated at the pool's current size, traced (I/O events) and getpages the trace reported as misses.", true);
  timeChart(chart(c, "object-io-chart"), ["simulated", "traced", "measured misses", "getpages/s"], [
    { name: "simulated", type: "line", showSymbol: false, data: series(s, "simulated_sync_reads_per_s") },
    { name: "traced", type: "line", showSymbol: false, data: series(s, "traced_sync_reads_per_s") },
    { name: "measured misses", type: "line", showSymbol: false, data: series(s, "measured_misses_per_s") },
    { name: "getpages/s", type: "line", showSymbol: false, yAxisIndex: 1, data: series(s, "getpages_per_s") },
  ], "reads/s", [{ type: "value", name: "getpages/s" }]);
  const w = card("object-ws", "Working set and sequential share", "");
  timeChart(chart(w, "object-ws-chart"), ["working set", "sequential share"], [
    { name: "working set", type: "line", showSymbol: false, data: series(s, "working_set_pages") },
    { name: "sequential share", type: "line", showSymbol: false, yAxisIndex: 1, data: series(s, "sequential_share") },
  ], "pages", [{ type: "value", name: "share", min: 0, max: 1 }]);
};

// ---------------------------------------------------------------- group page

const ratioText = (v) => (v === null || v === undefined ? "-" : Number(v).toLocaleString("en-US", { maximumFractionDigits: 2 }));
const pts = (v) => (v === null || v === undefined ? "-" : (v >= 0 ? "+" : "") + num(100 * v, 1) + " pt");
const mb = (v) => (v === null || v === undefined ? "-" : num(v, 1) + " MB");
// ECharts' own palette: a RATIO (or an XI cause) keeps its colour across its solid and dashed lines.
const PALETTE = ["#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"];
const setting = (r) => `${mb(r.structure_mb)}: RATIO ${ratioText(r.ratio)}, ${num(r.data_entries)} data entries, ${num(r.directory_entries)} directory entries`;

// A GBP curve against the structure's size: one line per RATIO (each point a data entries count),
// the current setting ● and, at its size, what the group measured ◆.
function gbpCurveChart(parent, id, curve, key, scale, yName, cur, measured) {
  const ratios = [...new Set(curve.map((r) => r.ratio))];
  const value = (v) => (v === null || v === undefined ? null : scale * v);
  const point = (r) => ({ value: [r.structure_mb, value(r[key])], entries: r.data_entries, ratio: r.ratio });
  const unit = scale === 100 ? " %" : "";
  chart(parent, id, 300).setOption({
    animation: false,
    tooltip: { trigger: "item", formatter: (p) => `${p.seriesName}<br>${num(p.value[0], 1)} MB${p.data.entries ? `, ${num(p.data.entries)} data entries` : ""}<br>${num(p.value[1], 2)}${unit}` },
    legend: { top: 0 },
    grid: { left: 70, right: 30, top: 40, bottom: 40 },
    xAxis: { type: "value", name: "GBP MB", nameLocation: "middle", nameGap: 26, scale: true },
    yAxis: { type: "value", name: yName, scale: true, axisLabel: { formatter: (v) => `${v}${unit}` } },
    series: [
      ...ratios.map((ratio, i) => ({ name: `RATIO ${ratioText(ratio)}`, type: "line", color: PALETTE[i % PALETTE.length], data: curve.filter((r) => r.ratio === ratio).map(point) })),
      // A ring around the current point, the measured diamond smaller: both show where they meet.
      { name: "current", type: "scatter", symbol: "circle", symbolSize: 18, z: 3, itemStyle: { color: "rgba(0,0,0,0)", borderColor: "#17212b", borderWidth: 2 }, data: cur ? [point(cur)] : [] },
      { name: "measured", type: "scatter", symbol: "diamond", symbolSize: 11, z: 4, itemStyle: { color: "#c62828" }, data: cur && measured && measured[key] !== null ? [{ value: [cur.structure_mb, value(measured[key])] }] : [] },
    ],
  }, { notMerge: true });
}

// The smallest structure (and its RATIO) at which a counter is zero over the window, in a sentence.
function smallestWithout(id, parent, curve, key, what, cur, rate) {
  let p = document.getElementById(id);
  if (!p) { p = el("p", { id, class: "callout" }); parent.append(p); }
  const zero = curve.filter((r) => r[key] === 0).sort((a, b) => a.structure_mb - b.structure_mb || a.ratio - b.ratio);
  const now = cur ? (cur[key] === 0 ? ` The current setting (${mb(cur.structure_mb)}, RATIO ${ratioText(cur.ratio)}) has none.` : ` The current setting (${mb(cur.structure_mb)}, RATIO ${ratioText(cur.ratio)}) has ${num(cur[rate], 2)}/s.`) : "";
  if (zero.length) {
    const z = zero[0];
    p.textContent = `No ${what} from ${mb(z.structure_mb)}: RATIO ${ratioText(z.ratio)} with ${num(z.data_entries)} data entries (${num(z.directory_entries)} directory entries), the smallest simulated structure without any over the window.${now}`;
    Object.assign(p.dataset, { mb: z.structure_mb, ratio: z.ratio, entries: z.data_entries });
  } else {
    const least = [...curve].sort((a, b) => a[rate] - b[rate] || a.structure_mb - b.structure_mb)[0];
    p.textContent = `Every simulated size and RATIO has ${what}; the fewest, ${num(least[rate], 2)}/s, at ${mb(least.structure_mb)} (RATIO ${ratioText(least.ratio)}): simulate larger structures or higher RATIOs.${now}`;
    Object.assign(p.dataset, { mb: "", ratio: "", entries: "" });
  }
}

function groupsTable(c, groups) {
  for (const r of groups) r._key = `${r.group_name}/${r.gbp}`;
  table(c, "groups-table", [
    { key: "group_name", label: "Group", text: true, render: (r) => link("group", { group: r.group_name, gbp: r.gbp }, r.group_name) },
    { key: "gbp", label: "GBP", text: true },
    { key: "members", label: "Members simulated", text: true, fmt: (v) => (v ? v.split(",").join(", ") : "-") },
    { key: "reporting_members", label: "Members reporting", fmt: (v) => num(v) },
    { key: "latest_pane_end", label: "Newest pane", text: true, fmt: time },
    { key: "latest_interval_end", label: "Newest statistics", text: true, fmt: time },
  ], groups, { key: "group_name", asc: true });
}

RENDER.group = async () => {
  if (!params.get("group") || !params.get("gbp")) {
    const groups = (await api("groups")).groups;
    if (!groups.length) { emptyPage("No data-sharing group yet: the group simulation writes gbp_curve, the statistics gbp_stats."); return; }
    groupsTable(card("groups", "Group buffer pools", "Every data-sharing group and GBP simulated or reporting statistics in the last 7 days.", true), groups);
    return;
  }
  const d = await api("group");
  const a = d.attributes, curve = d.curve, m = d.measured;
  const cur = curve.find((r) => r.is_current);
  const attrs = card("group-attributes", `${d.group_name} / ${d.gbp}`, "The group buffer pool, the members that share it, the setting simulated as current and the structure the group reported.");
  attrs.querySelector("h2").textContent = `${d.group_name} / ${d.gbp}`;
  kv(attrs, "group-kv", [
    ["Members", a.members ? a.members.split(",").join(", ") : "-", "members"],
    ["Current setting (simulated)", cur ? setting(cur) : "-", "current"],
    ["Reported (-DISPLAY GROUPBUFFERPOOL)", a.measured_data_entries === null ? "-" : `${mb(a.measured_structure_mb)}: RATIO ${ratioText(a.measured_ratio)}, ${num(a.measured_data_entries)} data entries, ${num(a.measured_directory_entries)} directory entries, GBPOOLT ${a.measured_gbpoolt === null ? "-" : num(a.measured_gbpoolt) + " %"}`, "reported"],
    ["Model", a.model ? `${a.model} (sampling ${num(a.sampling_rate, 4)})` : "-", "model"],
    ["Panes at the current setting", num(a.panes), "panes"],
    ["Newest pane end", time(a.latest_pane_end), "latest_pane_end"],
    ["Newest statistics interval end", time(a.latest_interval_end), "latest_interval_end"],
  ]);

  const w = card("group-window", "Simulation against measurement over the curve's window", "");
  w.querySelector(".note") || w.append(el("p", { class: "note" }));
  w.querySelector(".note").textContent = curve.length ? `Window ${time(curve[0].window_start)} – ${time(curve[0].window_end)} (${num(curve[0].panes)} panes${curve.some((r) => r.warmup) ? ", warming up" : ""}); measured: ${m && m.intervals ? `${num(m.intervals)} statistics intervals whose middle lies in it` : "no statistics interval in it"}.` : "No curve yet.";
  const rows = [
    ["disk_sync_reads_per_s", "Disk sync reads/s", (v) => num(v, 2)],
    ["gbp_hit_ratio", "GBP hit ratio", (v) => pct(v, 1)],
    ["directory_reclaims_per_s", "Directory reclaims/s", (v) => num(v, 2)],
    ["writes_failed_per_s", "Writes failed/s", (v) => num(v, 2)],
  ].map(([key, label, fmt]) => ({ _key: key, metric: label, simulated: cur ? cur[key] : null, measured: m ? m[key] : null, fmt }));
  table(w, "window-table", [
    { key: "metric", label: "", text: true },
    { key: "simulated", label: "Simulated (current)", fmt: (v, r) => r.fmt(v) },
    { key: "measured", label: "Measured", fmt: (v, r) => r.fmt(v) },
  ], rows, null);

  const note = curve.length ? `A line per RATIO over the data entries simulated; ● the current setting, ◆ measured over the same window. ${time(curve[0].window_start)} – ${time(curve[0].window_end)}.` : "No curve yet.";
  const rc = card("gbp-reads", "Disk sync reads against GBP size", note);
  rc.querySelector(".note").textContent = note;
  gbpCurveChart(rc, "gbp-reads-chart", curve, "disk_sync_reads_per_s", 1, "disk sync reads/s", cur, m);
  const hc = card("gbp-hit", "GBP hit ratio against GBP size", note);
  hc.querySelector(".note").textContent = note;
  gbpCurveChart(hc, "gbp-hit-chart", curve, "gbp_hit_ratio", 100, "GBP hit ratio", cur, m);

  const rec = card("gbp-reclaims", "Directory reclaims and failed writes against GBP size", "Per second over the window, a line per RATIO: directory reclaims (solid, left axis) cross-invalidate the pages the members cache; writes failed for lack of storage (dashed, right axis) force a castout.", true);
  if (curve.length) {
    smallestWithout("zero-reclaims", rec, curve, "directory_reclaims", "directory reclaims", cur, "directory_reclaims_per_s");
    smallestWithout("zero-failed-writes", rec, curve, "writes_failed_no_storage", "failed writes", cur, "writes_failed_per_s");
  }
  const ratios = [...new Set(curve.map((r) => r.ratio))];
  const perRatio = (key, dashed) => ratios.map((ratio, i) => ({
    name: `${dashed ? "failed writes" : "reclaims"}, RATIO ${ratioText(ratio)}`, type: "line", yAxisIndex: dashed ? 1 : 0,
    color: PALETTE[i % PALETTE.length], ...(dashed ? { lineStyle: { type: "dashed" } } : {}),
    data: curve.filter((r) => r.ratio === ratio).map((r) => [r.structure_mb, r[key]]),
  }));
  chart(rec, "gbp-reclaims-chart", 300).setOption({
    animation: false, tooltip: { trigger: "item" }, legend: { top: 0 },
    grid: { left: 70, right: 70, top: 40, bottom: 40 },
    xAxis: { type: "value", name: "GBP MB", nameLocation: "middle", nameGap: 26, scale: true },
    yAxis: [{ type: "value", name: "reclaims/s" }, { type: "value", name: "failed writes/s", alignTicks: true, splitLine: { show: false } }],
    series: [...perRatio("directory_reclaims_per_s", false), ...perRatio("writes_failed_per_s", true),
      { name: "current", type: "line", color: "#17212b", data: [], markLine: cur ? { silent: true, symbol: "none", label: { formatter: "current" }, data: [{ xAxis: cur.structure_mb }] } : undefined }],
  }, { notMerge: true });

  const xi = card("gbp-xi", "Cross-invalidations by cause", "Per second, each flat over the time it covers: measured per statistics interval (the group's counters, else the members' sum) and simulated at the current setting per pane (dashed).", true);
  // An interval's rate over the interval: a point at its start and one at its end.
  const spans = (rows, key) => rows.flatMap((r) => [[r.t_start, r[key] ?? null], [r.t_end, r[key] ?? null]]);
  timeChart(chart(xi, "gbp-xi-chart"), ["due to writes", "due to reclaims", "due to writes, simulated", "due to reclaims, simulated"], [
    { name: "due to writes", type: "line", showSymbol: false, color: PALETTE[0], data: spans(d.stats_series, "xi_due_to_writes_per_s") },
    { name: "due to reclaims", type: "line", showSymbol: false, color: PALETTE[3], data: spans(d.stats_series, "xi_due_to_reclaims_per_s") },
    { name: "due to writes, simulated", type: "line", showSymbol: false, color: PALETTE[0], lineStyle: { type: "dashed" }, data: spans(d.sim_series, "xi_due_to_writes_per_s") },
    { name: "due to reclaims, simulated", type: "line", showSymbol: false, color: PALETTE[3], lineStyle: { type: "dashed" }, data: spans(d.sim_series, "xi_due_to_reclaims_per_s") },
  ], "XIs/s");

  const members = [...new Set(d.member_series.map((r) => r.member))];
  const byMember = (key) => members.map((mm) => ({ name: mm, type: "line", showSymbol: false, data: d.member_series.filter((r) => r.member === mm).map((r) => [r.t, r[key] === null ? null : 100 * r[key]]) }));
  const percentAxis = { axisLabel: { formatter: (v) => `${v} %` } };
  const lh = card("member-lbp-hit", "LBP hit ratio per member", "Getpages that found a valid buffer in the member's LBP, simulated with the GBP at its current setting, per pane.");
  timeChart(chart(lh, "member-lbp-hit-chart"), members, byMember("lbp_hit_ratio"), "%");
  charts["member-lbp-hit-chart"].setOption({ yAxis: [percentAxis], tooltip: { valueFormatter: (v) => pct(v / 100, 2) } });
  const xr = card("member-xi", "Invalidation rate per member", "XI reads per getpage: getpages that found their buffer cross-invalidated, simulated, per pane.");
  timeChart(chart(xr, "member-xi-chart"), members, byMember("xi_reads_per_getpage"), "%");
  charts["member-xi-chart"].setOption({ yAxis: [percentAxis], tooltip: { valueFormatter: (v) => pct(v / 100, 2) } });

  // Each member's LBP curve over the GBP curve's window: its sync reads by LBP size, from the GBP and from disk.
  const lbpMembers = [...new Set(d.lbp_curve.map((r) => `${r.member}\u0000${r.pool}`))];
  lbpMembers.forEach((key, i) => {
    const [mm, pool] = key.split("\u0000");
    const rows = d.lbp_curve.filter((r) => r.member === mm && r.pool === pool);
    const lc = card(`lbp-curve-${i}`, "", "");
    lc.querySelector("h2").textContent = `LBP curve of ${mm} / ${pool}`;
    const now = rows.find((r) => r.is_current);
    lc.querySelector(".note") || lc.append(el("p", { class: "note" }));
    lc.querySelector(".note").textContent = `Sync reads/s by LBP size over the GBP curve's window, stacked: read from disk and returned by the GBP (XI refreshes and not-found reads).${now ? ` Current ${num(now.size_pages)} buffers: LBP hit ratio ${pct(now.lbp_hit_ratio)}.` : ""}`;
    chart(lc, `lbp-curve-chart-${i}`, 260).setOption({
      animation: false, tooltip: { trigger: "axis" }, legend: { top: 0 },
      grid: { left: 70, right: 30, top: 40, bottom: 40 },
      xAxis: { type: "value", name: "LBP buffers", nameLocation: "middle", nameGap: 26, scale: true },
      yAxis: { type: "value", name: "sync reads/s" },
      series: [
        { name: "from disk", type: "line", stack: "reads", areaStyle: {}, data: rows.map((r) => [r.size_pages, r.disk_sync_reads_per_s]),
          markLine: now ? { silent: true, symbol: "none", label: { formatter: "current" }, data: [{ xAxis: now.size_pages }] } : undefined },
        { name: "from the GBP", type: "line", stack: "reads", areaStyle: {}, data: rows.map((r) => [r.size_pages, r.gbp_reads_per_s]) },
      ],
    }, { notMerge: true });
  });
  for (let i = lbpMembers.length; document.getElementById(`lbp-curve-${i}`); i++) {
    charts[`lbp-curve-chart-${i}`]?.dispose();
    delete charts[`lbp-curve-chart-${i}`];
    document.getElementById(`lbp-curve-${i}`).remove();
  }

  const acc = card("gbp-accuracy", "Accuracy per statistics interval", "The simulation at the GBP's current setting against the group's statistics (the view gbp_accuracy): errors are simulated / measured - 1, the hit ratio's in points.", true);
  for (const r of d.accuracy) r._key = r.interval_end;
  const err = (v) => (v !== null && v !== undefined && Math.abs(v) > 0.02 ? "bad" : "");
  table(acc, "gbp-accuracy-table", [
    { key: "interval_end", label: "Interval end", text: true, fmt: time },
    { key: "members", label: "Members", fmt: (v) => num(v) },
    { key: "panes", label: "Panes", fmt: (v) => num(v) },
    { key: "data_entries", label: "Data entries", fmt: (v) => num(v) },
    { key: "ratio", label: "RATIO", fmt: ratioText },
    { key: "simulated_disk_sync_reads", label: "Disk reads sim.", fmt: (v) => num(v, 1) },
    { key: "measured_disk_sync_reads", label: "measured", fmt: (v) => num(v) },
    { key: "disk_sync_reads_error", label: "error", fmt: signedPct, cls: err },
    { key: "simulated_gbp_hit_ratio", label: "GBP hit sim.", fmt: (v) => pct(v, 2) },
    { key: "measured_gbp_hit_ratio", label: "measured", fmt: (v) => pct(v, 2) },
    { key: "gbp_hit_ratio_error", label: "error", fmt: pts, cls: err },
    { key: "simulated_directory_reclaims", label: "Reclaims sim.", fmt: (v) => num(v, 1) },
    { key: "measured_directory_reclaims", label: "measured", fmt: (v) => num(v) },
    { key: "directory_reclaims_error", label: "error", fmt: signedPct, cls: err },
    { key: "warmup", label: "Warm-up", text: true, fmt: (v) => (v ? "yes" : "") },
  ], d.accuracy, { key: "interval_end" });
};

const METRICS = [
  ["getpages", "Getpages", 0], ["getpages_per_s", "Getpages/s", 1], ["observed_hit_ratio", "Measured hit ratio", "pct"],
  ["sim_sync_reads_per_s", "Simulated sync reads/s", 2], ["sim_random_hit_ratio", "Simulated random hit ratio", "pct"],
  ["max_working_set_pages", "Max working set (pages)", 0], ["panes", "Panes", 0],
];

RENDER.history = async () => {
  if (!params.get("source") || !params.get("pool")) { emptyPage("Choose a pool above."); return; }
  if (!params.get("b_to")) {
    // Default: the newest hour against the hour before it.
    const w = (await api("pool", { range: "1h" })).window;
    if (!w) { emptyPage("No panes for this pool yet."); return; }
    const end = Date.parse(w.end), hour = 3600e3;
    for (const [k, v] of [["a_from", end - 2 * hour], ["a_to", end - hour], ["b_from", end - hour], ["b_to", end]]) params.set(k, new Date(v).toISOString());
    history.replaceState(null, "", `${location.pathname}?${params}`);
  }
  const form = card("ranges", "Compare two ranges of event time", "Times in UTC (ISO 8601). The same logic as `poolsight compare`.", true);
  if (!document.getElementById("range-form")) {
    const inputs = ["a_from", "a_to", "b_from", "b_to"].map((k) => el("label", {}, `${k.replace("_", " ")} `, el("input", { id: `in-${k}`, value: params.get(k), size: 24 })));
    const f = el("form", { id: "range-form", class: "ranges", onsubmit: (e) => {
      e.preventDefault();
      for (const k of ["a_from", "a_to", "b_from", "b_to"]) params.set(k, document.getElementById(`in-${k}`).value);
      setParam("b_to", params.get("b_to"));
    } }, ...inputs, el("button", { type: "submit", text: "Compare" }));
    form.append(f);
  }
  const d = await api("history");
  const [a, b] = d.ranges;
  const rows = METRICS.map(([key, label, digits]) => {
    const fa = a[key], fb = b[key];
    const fmt = (v) => (digits === "pct" ? pct(v, 2) : num(v, digits));
    const change = fa && fb !== null && fb !== undefined ? fb / fa - 1 : null;
    return { _key: key, metric: label, a: fmt(fa), b: fmt(fb), change: digits === "pct" ? (fa !== null && fb !== null ? `${num(100 * (fb - fa), 2)} pt` : "-") : signedPct(change) };
  });
  const t = card("compare", "Side by side", `A: ${time(a.start)} – ${time(a.end)}; B: ${time(b.start)} – ${time(b.end)}.`);
  t.querySelector(".note").textContent = `A: ${time(a.start)} – ${time(a.end)}; B: ${time(b.start)} – ${time(b.end)}.`;
  table(t, "compare-table", [
    { key: "metric", label: "Metric", text: true }, { key: "a", label: "A" }, { key: "b", label: "B" }, { key: "change", label: "B vs A" },
  ], rows, null);
  const sim = d.similarity;
  const sc = card("similarity", "How alike the workloads are", "1 = the same objects in the same random / sequential / list mix at the same rate.");
  kv(sc, "similarity-kv", [
    ["Similarity score", num(sim.score, 3), "score"],
    ["Getpage rate change", signedPct(sim.getpage_rate_change), "getpage_rate_change"],
    ["Mix A (random / sequential / list)", ["random", "sequential", "list"].map((k) => pct(sim.mix_a[k])).join(" / "), "mix_a"],
    ["Mix B", ["random", "sequential", "list"].map((k) => pct(sim.mix_b[k])).join(" / "), "mix_b"],
    ["Objects only in B", sim.objects_new.join(", ") || "none", "objects_new"],
    ["Objects only in A", sim.objects_gone.join(", ") || "none", "objects_gone"],
  ]);
  const cc = card("history-curve", "Curves of A and B", "Simulated sync reads/s by size factor (1 = the size at the time).", true);
  chart(cc, "history-curve-chart").setOption({
    animation: false, tooltip: { trigger: "axis" }, legend: { data: ["A", "B"], top: 0 },
    grid: { left: 70, right: 30, top: 30, bottom: 40 },
    xAxis: { type: "value", name: "size factor" }, yAxis: { type: "value", name: "sync reads/s" },
    series: [a, b].map((r, i) => ({ name: i ? "B" : "A", type: "line", data: r.curve.map((p) => [p.size_factor, p.sync_reads_per_s]) })),
  }, { notMerge: true });
};

RENDER.checks = async () => {
  const d = await api("checks");
  const c = card("prediction-checks", "Predictions checked against measurement", "After each -ALTER BUFFERPOOL: what the curve before the change predicted for the new setting against what the pool measured after it (per getpage, times the getpage rate after), with how alike the workloads were.", true);
  for (const r of d.checks) r._key = `${r.source}/${r.pool}/${r.changed_at}`;
  table(c, "checks-table", [
    { key: "source", label: "Source", text: true }, { key: "pool", label: "Pool", text: true },
    { key: "changed_at", label: "Changed at", text: true, fmt: time }, { key: "setting", label: "Setting", text: true },
    { key: "old_value", label: "From", fmt: (v) => num(v) }, { key: "new_value", label: "To", fmt: (v) => num(v) },
    { key: "predicted_sync_reads_per_s", label: "Predicted reads/s", fmt: (v) => num(v, 1) },
    { key: "measured_sync_reads_per_s", label: "Measured reads/s", fmt: (v) => num(v, 1) },
    { key: "error_ratio", label: "Error", fmt: signedPct, cls: (v) => (v !== null && v !== undefined && Math.abs(v) > 0.1 ? "bad" : "") },
    { key: "similarity", label: "Similarity", fmt: (v) => num(v, 3) }, { key: "panes_after", label: "Panes after", fmt: (v) => num(v) },
  ], d.checks, { key: "changed_at" });
  if (params.get("source") && params.get("pool")) {
    const a = card("accuracy-history", `Accuracy of ${params.get("source")} / ${params.get("pool")} at its own settings`, "Simulated / measured - 1 per window: trace (hit flags) and statistics intervals.", true);
    const by = (from) => d.accuracy.filter((r) => r.measured_from === from).map((r) => [r.t, r.error_ratio]);
    timeChart(chart(a, "accuracy-chart"), ["trace", "statistics"], [
      { name: "trace", type: "line", showSymbol: false, data: by("trace") },
      { name: "statistics", type: "line", step: "end", data: by("statistics") },
    ], "error", []);
  }
};

RENDER.advice = async () => {
  const d = await api("advice");
  if (!d.advice.length) { emptyPage("No advice yet: the advice service evaluates every 5 minutes (or run poolsight advise --evaluate)."); return; }
  const c = card("advice", "Advice", "The latest evaluation of each source: what to change, the predicted effect from the simulation at each pool's own policy, the simulation's accuracy at the current size, and the commands. Each piece of advice starts from the pools as they are now.", true);
  for (const r of d.advice) r._key = `${r.source}/${r.pool || ""}/${r.kind}`;
  table(c, "advice-table", [
    { key: "source", label: "Source", text: true }, { key: "pool", label: "Pool", text: true },
    { key: "kind", label: "Kind", text: true }, { key: "summary", label: "Advice", text: true },
    { key: "avoided_sync_reads_per_s", label: "Avoided reads/s", fmt: (v) => num(v, 1) },
    { key: "cpu_seconds_per_24h", label: "CPU s / 24 h", fmt: (v) => num(v, 0) },
    { key: "elapsed_seconds_per_24h", label: "Elapsed s / 24 h", fmt: (v) => num(v, 0) },
    { key: "sim_error", label: "Sim error", fmt: signedPct, cls: (v) => (v !== null && v !== undefined && Math.abs(v) > 0.1 ? "bad" : ""), title: "simulated / measured sync reads - 1 at the current size" },
    { key: "command", label: "Commands", text: true, render: (r) => el("pre", { class: "cmd", text: r.command || "" }) },
    { key: "evaluated_at", label: "Evaluated", text: true, fmt: time },
  ], d.advice, { key: "avoided_sync_reads_per_s" });
  for (const [source, b] of Object.entries(d.budgets)) {
    const k = card(`budget-${source}`, `Memory budget of ${source}`, b.paging_guard ? `No growth: ${b.paging_guard}` : `${b.method || ""}; objective: ${b.objective}.`);
    kv(k, `budget-kv-${source}`, [
      ["frames (4K)", num(b.frames_4k), "frames"], ["redistribute", b.redistribute ? "yes" : "no", "redistribute"],
      ["avoided sync reads/s", num(b.avoided_sync_reads_per_s, 1), "avoided"],
      ...Object.entries(b.allocation || {}).map(([p, n]) => [p, (n > 0 ? "+" : "") + num(n) + " buffers", `alloc-${p}`]),
    ]);
  }
};

// ---------------------------------------------------------------- statistics pages
// Each over the range ending at its table's newest row (?source= for one source).

function windowNote(d, what) {
  return d.window ? `${what} from ${time(d.window.start)} to ${time(d.window.end)}.` : `No ${what} yet.`;
}

// One line per key (source / pool ...) of rows with a time `t`.
function linesBy(rows, keyOf, value, scale = 1) {
  const keys = [...new Set(rows.map(keyOf))];
  return keys.map((k) => ({ name: k, type: "line", showSymbol: true, symbolSize: 4, data: rows.filter((r) => keyOf(r) === k).map((r) => [r.t, r[value] === null ? null : scale * r[value]]) }));
}

RENDER.writes = async () => {
  const d = await api("writes");
  const rows = d.write_intervals;
  const key = (r) => `${r.source}/${r.pool}`;
  const c = card("writes-chart-card", "Pages per write", windowNote(d, "Statistics intervals") + " Seed 000: below 10 pages per write I/O, lower VDWQT.");
  c.querySelector(".note").textContent = windowNote(d, "Statistics intervals") + " Seed 000: below 10 pages per write I/O, lower VDWQT.";
  timeChart(chart(c, "pages-per-write-chart"), [...new Set(rows.map(key))], linesBy(rows, key, "pages_per_write"), "pages/write");
  const t = card("writes", "Writes per pool and interval", "Deferred writes should come from VDWQT (per data set), not DWQT (the whole pool) (seed 000: DWQT above VDWQT, reverse it); synchronous writes, DMTH and write engine shortages hold applications up.", true);
  for (const r of rows) r._key = `${r.source}/${r.pool}/${r.t}`;
  table(t, "writes-table", [
    { key: "source", label: "Source", text: true }, { key: "pool", label: "Pool", text: true },
    { key: "t", label: "Interval end", text: true, fmt: time },
    { key: "pages_written_per_s", label: "Pages written/s", fmt: (v) => num(v, 1) },
    { key: "write_ios_per_s", label: "Write I/Os/s", fmt: (v) => num(v, 2) },
    { key: "pages_per_write", label: "Pages/write", fmt: (v) => num(v, 2), cls: (v) => (v !== null && v < 10 ? "warn" : "") },
    { key: "sync_write_share", label: "Sync writes", fmt: (v) => pct(v), cls: (v) => (v !== null && v > 0.05 ? "warn" : "") },
    { key: "dwqt_reached", label: "DWQT reached", fmt: (v) => num(v), cls: (v, r) => (v > (r.vdwqt_reached || 0) ? "bad" : "") },
    { key: "vdwqt_reached", label: "VDWQT reached", fmt: (v) => num(v) },
    { key: "dm_threshold_reached", label: "DMTH reached", fmt: (v) => num(v), cls: (v) => (v > 0 ? "bad" : "") },
    { key: "write_engine_not_available", label: "No write engine", fmt: (v) => num(v), cls: (v) => (v > 0 ? "bad" : "") },
    { key: "dwqt", label: "DWQT", fmt: (v) => (v === null ? "-" : `${num(v)} %`) },
    { key: "vdwqt", label: "VDWQT", fmt: (v) => (v === null ? "-" : `${num(v)} %`) },
  ], rows, { key: "t" });
};

RENDER.memory = async () => {
  const d = await api("memory");
  const rows = d.memory_intervals;
  const c = card("memory-chart-card", "Real storage", windowNote(d, "System memory intervals"));
  c.querySelector(".note").textContent = windowNote(d, "System memory intervals") + " Seed 000: paging impacts the entire LPAR; no pool may grow while it pages.";
  timeChart(chart(c, "memory-chart"), [], [
    ...linesBy(rows, (r) => `${r.source} available`, "real_storage_available_mb"),
    ...linesBy(rows, (r) => `${r.source} DB2`, "db2_real_storage_mb"),
    ...linesBy(rows, (r) => `${r.source} page-ins/s`, "pageins_per_second").map((l) => ({ ...l, yAxisIndex: 1, lineStyle: { type: "dashed" } })),
  ], "MB", [{ type: "value", name: "page-ins/s", scale: true }]);
  const t = card("memory", "System memory per interval", "Real storage, what is available, DB2's share and the paging rate.", true);
  for (const r of rows) r._key = `${r.source}/${r.t}`;
  table(t, "memory-table", [
    { key: "source", label: "Source", text: true }, { key: "t", label: "Interval end", text: true, fmt: time },
    { key: "real_storage_mb", label: "Real storage MB", fmt: (v) => num(v) },
    { key: "real_storage_available_mb", label: "Available MB", fmt: (v) => num(v) },
    { key: "db2_real_storage_mb", label: "DB2 MB", fmt: (v) => num(v) },
    { key: "pageins_per_second", label: "Page-ins/s", fmt: (v) => num(v, 2), cls: (v) => (v > 0 ? "bad" : "") },
    { key: "aux_slots_used", label: "Aux slots used", fmt: (v) => num(v) },
  ], rows, { key: "t" });
  const p = card("memory-pools", "Pools' memory", "Each pool at its newest statistics interval: buffers, page size, MB, its share of the source's pool memory, and how it is backed.", true);
  const frame = { 4096: "4K", 1048576: "1M", 2147483648: "2G" };
  for (const r of d.memory_pools) r._key = `${r.source}/${r.pool}`;
  table(p, "memory-pools-table", [
    { key: "source", label: "Source", text: true }, { key: "pool", label: "Pool", text: true, render: (r) => link("pool", { source: r.source, pool: r.pool }, r.pool) },
    { key: "buffers", label: "Buffers", fmt: (v) => num(v) },
    { key: "page_size", label: "Page", fmt: (v) => (v ? `${num(v / 1024)}K` : "-") },
    { key: "memory_mb", label: "MB", fmt: (v) => num(v, 1) },
    { key: "memory_share", label: "Share", fmt: (v) => pct(v) },
    { key: "pgfix", label: "PGFIX", text: true, fmt: (v) => (v === null || v === undefined ? "-" : v ? "YES" : "NO") },
    { key: "frame_size", label: "Frames", fmt: (v) => (v ? frame[v] || num(v) : "-") },
  ], d.memory_pools, { key: "memory_mb" });
};

RENDER.purescale = async () => {
  const d = await api("purescale");
  const rows = d.purescale_intervals;
  const key = (r) => `${r.source}/${r.pool}`;
  const c = card("purescale-chart-card", "Hit ratios", windowNote(d, "pureScale intervals"));
  c.querySelector(".note").textContent = windowNote(d, "pureScale intervals") + " Seed 004: LBP hit ratio great at 85 % or more, good at 65 %.";
  timeChart(chart(c, "purescale-hit-chart"), [], [
    ...linesBy(rows, (r) => `${key(r)} LBP`, "luw_lbp_hit_ratio"),
    ...linesBy(rows, (r) => `${key(r)} GBP`, "luw_gbp_hit_ratio").map((l) => ({ ...l, lineStyle: { type: "dashed" } })),
  ], "%");
  const t = card("purescale", "pureScale pools per interval", "LBP hit ratio (without pages found in the GBP), GBP hit ratio, GBP full per 10,000 commits and CF wait per call, with seed 004's bands.", true);
  for (const r of rows) r._key = `${key(r)}/${r.t}`;
  const band = (v) => (v === "poor" ? "bad" : v === "good" ? "warn" : "");
  table(t, "purescale-table", [
    { key: "source", label: "Source", text: true }, { key: "pool", label: "Pool", text: true },
    { key: "t", label: "Interval end", text: true, fmt: time },
    { key: "luw_hit_ratio", label: "Hit ratio", fmt: (v) => pct(v) },
    { key: "luw_lbp_hit_ratio", label: "LBP hit", fmt: (v) => pct(v) }, { key: "lbp_band", label: "LBP band", text: true, cls: band },
    { key: "luw_gbp_hit_ratio", label: "GBP hit", fmt: (v) => pct(v) },
    { key: "gbp_full_per_10k_commits", label: "GBP full / 10k commits", fmt: (v) => num(v, 2) }, { key: "gbp_full_band", label: "GBP full band", text: true, cls: band },
    { key: "cf_wait_us_per_call", label: "CF wait µs/call", fmt: (v) => num(v, 1) },
  ], rows, { key: "t" });
};

RENDER.backups = async () => {
  const d = await api("backups");
  const runs = d.backup_runs;
  const c = card("backup-chart-card", "Throughput per run", windowNote(d, "Backup and restore runs"));
  c.querySelector(".note").textContent = windowNote(d, "Backup and restore runs") + " Seed 003: compare each run with the one before it.";
  timeChart(chart(c, "backup-chart"), [], linesBy(runs.map((r) => ({ ...r, t: r.event_time })), (r) => `${r.source} ${r.operation}`, "mb_per_s"), "MB/s");  // a source names its database
  const t = card("backups", "Runs, each against the one before", "Elapsed time, MB/s and the bottleneck the threads' time shows (db2diag.log's performance statistics).", true);
  for (const r of runs) r._key = `${r.source}/${r.database}/${r.operation}/${r.event_time}`;
  table(t, "backups-table", [
    { key: "source", label: "Source", text: true }, { key: "database", label: "Database", text: true },
    { key: "operation", label: "Operation", text: true }, { key: "event_time", label: "Ended", text: true, fmt: time },
    { key: "elapsed_seconds", label: "Elapsed s", fmt: (v) => num(v, 1) },
    { key: "previous_elapsed_seconds", label: "Before s", fmt: (v) => num(v, 1) },
    { key: "mbytes", label: "MB", fmt: (v) => num(v) }, { key: "mb_per_s", label: "MB/s", fmt: (v) => num(v, 1) },
    { key: "mb_per_s_change", label: "MB/s vs before", fmt: signedPct, cls: (v) => (v !== null && v < -0.1 ? "bad" : "") },
    { key: "parallelism", label: "Parallelism", fmt: (v) => num(v) }, { key: "buffers", label: "Buffers", fmt: (v) => num(v) },
    { key: "bottleneck", label: "Bottleneck", text: true }, { key: "findings", label: "Findings", text: true },
  ], runs, { key: "event_time" });
  const th = card("backup-threads", "Threads", "Where each thread spent its time: I/O, the message queue (waiting for buffers to fill), the wait queue (for free buffers).", true);
  for (const r of d.backup_threads) r._key = `${r.source}/${r.database}/${r.event_time}/${r.kind}/${r.thread}`;
  table(th, "backup-threads-table", [
    { key: "source", label: "Source", text: true }, { key: "database", label: "Database", text: true },
    { key: "event_time", label: "Ended", text: true, fmt: time }, { key: "kind", label: "Kind", text: true },
    { key: "thread", label: "Thread", fmt: (v) => num(v) }, { key: "total_seconds", label: "Total s", fmt: (v) => num(v, 1) },
    { key: "io_share", label: "I/O", fmt: (v) => pct(v) }, { key: "msgq_share", label: "Msg queue", fmt: (v) => pct(v) },
    { key: "waitq_share", label: "Wait queue", fmt: (v) => pct(v) }, { key: "mbytes", label: "MB", fmt: (v) => num(v) },
    { key: "finding", label: "Finding", text: true },
  ], d.backup_threads, { key: "event_time" });
};

RENDER.health = async () => {
  const d = await api("health");
  const t = card("freshness", "Freshness per table", "Newest row of each table (its time column) and its age on the wall clock.");
  for (const r of d.tables) r._key = r.table_name;
  table(t, "freshness-table", [
    { key: "table_name", label: "Table", text: true }, { key: "newest", label: "Newest", text: true, fmt: time },
    { key: "age_s", label: "Age", fmt: age, cls: (v) => (v > 900 ? "warn" : "") }, { key: "row_count", label: "Rows", fmt: (v) => num(v) },
  ], d.tables, { key: "table_name", asc: true });
  const j = card("jobs", "Streaming jobs", "From the Flink REST API.");
  for (const r of d.jobs) r._key = r.name;
  table(j, "jobs-table", [
    { key: "name", label: "Job", text: true }, { key: "state", label: "State", text: true, cls: (v) => (v === "RUNNING" ? "ok" : "bad") },
    { key: "started", label: "Started", text: true, fmt: time }, { key: "duration_s", label: "Running for", fmt: age },
  ], d.jobs, null);
  const dl = card("dead-letters", `Dead letters of the last ${d.days} days`, "Records that could not be used, by collector, source and reason.", true);
  for (const r of d.dead_letters) r._key = `${r.collector}/${r.source}/${r.reason}`;
  table(dl, "dead-letters-table", [
    { key: "collector", label: "Collector", text: true }, { key: "source", label: "Source", text: true },
    { key: "reason", label: "Reason", text: true }, { key: "records", label: "Records", fmt: (v) => num(v) },
    { key: "latest", label: "Latest", text: true, fmt: time }, { key: "example", label: "Example", text: true },
  ], d.dead_letters, { key: "records" });
};

function emptyPage(text) {
  const c = card("empty", "Nothing to show", text, true);
  c.querySelector(".note").textContent = text;
}

// ---------------------------------------------------------------- refresh loop

async function refresh() {
  clearTimeout(timer);
  const status = document.getElementById("status");
  const error = document.getElementById("error");
  const t0 = performance.now();
  try {
    await RENDER[page]();
    document.body.dataset.renderMs = String(Math.round(performance.now() - t0));
    error.hidden = true;
    refreshes += 1;
    document.body.dataset.refreshes = String(refreshes);
    if (!document.body.dataset.loaded) document.body.dataset.loadedMs = String(Math.round(performance.now()));
    document.body.dataset.loaded = "1";
    status.textContent = `updated ${new Date().toISOString().slice(11, 19)}Z in ${Math.round(performance.now() - t0)} ms · every ${REFRESH_MS / 1000} s`;
  } catch (e) {
    error.hidden = false;
    error.textContent = `Could not load ${page}: ${e.message}. Retrying every ${REFRESH_MS / 1000} s.`;
    document.body.dataset.failed = String(Number(document.body.dataset.failed || 0) + 1);
  }
  timer = setTimeout(refresh, document.hidden ? 4 * REFRESH_MS : REFRESH_MS);
}

document.addEventListener("DOMContentLoaded", async () => {
  if (!RENDER[page]) { emptyPage(`No page ${page}.`); return; }
  document.title = `poolsight · ${PAGES[page] || "Object"}${params.get("pool") ? " · " + params.get("pool") : ""}`;
  buildNav();
  await refresh();  // the page's own data first: the pool list's query would compete with it
  buildControls();
});
