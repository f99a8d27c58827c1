// minigrad explorer: the page's script (see explore.py for the data it reads).
// Text from the data is only ever set with textContent, never parsed as markup.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const N = D.nodes;
const S = D.strings;  // the interface's words, in the page's language (explore.json)
const SEP = "\u0001";
const open = new Set();            // keys of the open groups ("a" SEP "b" ...)
const readers = N.map(() => 0);    // how many times each node is read
N.forEach(n => n.in.forEach(p => { readers[p] += 1; }));
const root = D.order[D.order.length - 1];
let mode = "engine", k = 0, hits = new Set(), sums = {};

function fill(text, fields) {
  return text.replace(/\{(\w+)\}/g, (m, f) => (f in fields ? String(fields[f]) : m));
}
function el(tag, attrs, text, parent) {
  const e = document.createElement(tag);
  for (const a in attrs) e.setAttribute(a, attrs[a]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
const holder = el("div");
holder.innerHTML = "<svg></svg>";  // a constant: the parser puts it in the SVG namespace
const svg = holder.firstChild, NS = svg.namespaceURI;
function sv(tag, attrs, parent, text) {
  const e = document.createElementNS(NS, tag);
  for (const a in attrs) e.setAttribute(a, attrs[a]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// ---- numbers: a small array whole, else min / mean / max and a histogram --------------------
function num(x, p) {  // p significant digits (6: as embedded), in exponent form when tiny
  if (typeof x === "string") return x;
  const r = +x.toPrecision(p || 6);
  return r !== 0 && Math.abs(r) < 1e-3 ? r.toExponential() : String(r);
}
function short(v) {
  if (v === null || v === undefined) return "—";
  if (Array.isArray(v)) return v.length === 1 ? num(v[0], 4) : "[" + v.slice(0, 3).map(
    x => num(x, 3)).join(" ") + (v.length > 3 ? " …]" : "]");
  return "min " + num(v.min, 3) + " max " + num(v.max, 3);
}
function full(v, shape) {
  if (v === null || v === undefined) return "—";
  if (!Array.isArray(v)) {
    const top = Math.max(...(v.hist || [])), bars = v.hist ? "\n" + v.hist.map(
      c => "▁▂▃▄▅▆▇█"[Math.round(7 * c / top)]).join("") : "";
    return "min " + num(v.min) + "  mean " + num(v.mean) + "  max " + num(v.max) + bars +
      (v.bad ? "  (" + v.bad + " non-finite)" : "");
  }
  const cols = shape.length > 1 ? shape[shape.length - 1] : v.length || 1, rows = [];
  for (let i = 0; i < v.length; i += cols) {
    rows.push(v.slice(i, i + cols).map(x => num(x)).join(" "));
  }
  return shape.length === 0 ? rows.join("") : "[" + rows.join("\n ") + "]";
}
function name(i) { return "n" + i + " " + N[i].t; }

// ---- which box each node is drawn in: itself, or its outermost closed group ---------------
const STEP = /^step \d+$/, MERGED = "step ×";  // a decoder's closed steps: one "× T" box
let merged = true;
function unitOf(i) {
  const sc = N[i].sc;
  for (let d = 1; d <= sc.length; d++) {
    const key = sc.slice(0, d).join(SEP);
    if (open.has(key)) continue;
    const step = merged && STEP.test(sc[d - 1]);
    return "g" + (step ? sc.slice(0, d - 1).concat(MERGED).join(SEP) : key);
  }
  return "n" + i;
}

// ---- a layered layout of the boxes: rows by longest path, ordered by the Python layout ----
function layoutUnits() {
  const unit = N.map((_, i) => unitOf(i)), U = new Map();
  N.forEach((n, i) => {
    if (!U.has(unit[i])) U.set(unit[i], {key: unit[i], members: [], pred: new Set(),
      succ: new Set(), x: 0});
    U.get(unit[i]).members.push(i);
  });
  const edges = new Map();
  N.forEach((n, b) => n.in.forEach(a => {
    if (unit[a] === unit[b]) return;
    const key = unit[a] + ">" + unit[b], seen = edges.get(key);
    edges.set(key, [unit[a], unit[b], a, b, seen ? seen[4] + 1 : 1]);
    U.get(unit[b]).pred.add(unit[a]);
    U.get(unit[a]).succ.add(unit[b]);
  }));
  const order = [...U.values()].sort((a, b) => a.members[0] - b.members[0]);
  const indeg = new Map(order.map(u => [u.key, u.pred.size])), done = new Set();
  for (const u of order) u.layer = 0;
  while (done.size < order.length) {  // Kahn's order; on a cycle, the earliest unit goes first
    const u = order.find(v => !done.has(v.key) && indeg.get(v.key) === 0) ||
      order.find(v => !done.has(v.key));
    done.add(u.key);
    for (const s of u.succ) {
      indeg.set(s, indeg.get(s) - 1);
      if (!done.has(s)) U.get(s).layer = Math.max(U.get(s).layer, u.layer + 1);
    }
  }
  for (const u of order) {  // a source sits just above its first reader
    if (!u.pred.size && u.succ.size) {
      u.layer = Math.min(...[...u.succ].map(s => U.get(s).layer)) - 1;
    }
  }
  const rows = [];
  for (const u of order) {
    u.lines = labelOf(u);
    u.w = Math.max(...u.lines.map(s => s.length)) * 8 + 16;
    u.h = u.lines.length * 15 + 10;
    u.key0 = u.members.reduce((s, i) => s + N[i].x, 0) / u.members.length;
    (rows[u.layer] = rows[u.layer] || []).push(u);
  }
  const mean = (us, or) => (us.length ? us.reduce((s, v) => s + v.x, 0) / us.length : or);
  const place = row => {  // left to right in the order wanted, pushed apart where they overlap
    row.sort((a, b) => a.want - b.want || a.key0 - b.key0);
    let right = -Infinity;
    for (const u of row) {
      u.x = Math.max(u.want, right + u.w / 2 + 24);
      right = u.x + u.w / 2;
    }
  };
  const full = rows.filter(r => r);
  let y = 12;
  for (const row of full) {  // down: each box under the mean of its inputs placed above
    for (const u of row) {
      u.want = mean([...u.pred].map(p => U.get(p)).filter(p => p.layer < u.layer), u.key0 / 3);
    }
    place(row);
    for (const u of row) u.y = y;
    y += Math.max(...row.map(u => u.h)) + 44;
  }
  for (const row of full.slice().reverse()) {  // up: an input (a weight) over its readers
    for (const u of row) u.want = u.pred.size ? u.x : mean([...u.succ].map(s => U.get(s)), u.x);
    place(row);
  }
  const shift = 12 - Math.min(...order.map(u => u.x - u.w / 2));
  for (const u of order) u.x += shift;
  return {units: order, edges: [...edges.values()], U: U, height: y};
}

function labelOf(u) {
  if (u.key[0] === "g") {
    const frames = u.key.slice(1).split(SEP), last = frames[frames.length - 1];
    const steps = new Set(u.members.map(i => N[i].sc[frames.length - 1])).size;
    return ["▸ " + last + (last === MERGED ? " " + steps : ""),
      fill(S.nodes, {k: u.members.length})];
  }
  const i = u.members[0], n = N[i];
  const lines = ["n" + i + " " + n.t, "(" + n.s.join(",") + ") " + n.d];
  lines.push(k > 0 ? "Σ " + short(sums[i]) : "g " + short(n.g));
  return lines;
}

// ---- the stepper's state -------------------------------------------------------------------
function steps() { return mode === "engine" ? D.steps : D.naive; }
function sumsAt() {  // every node's sum of shares after the first k steps
  const at = {};
  if (steps().length) at[root] = steps()[0].g;
  for (const st of steps().slice(0, k)) for (const [p, share, sum] of st.to) at[p] = sum || share;
  return at;
}

// ---- drawing -------------------------------------------------------------------------------
function render() {
  sums = sumsAt();
  const L = layoutUnits(), cur = k > 0 ? steps()[k - 1] : null;
  const recv = new Set(cur ? cur.to.map(t => t[0]) : []);
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const defs = sv("defs", {}, svg), m = sv("marker", {id: "arrow", viewBox: "0 0 10 10",
    refX: 10, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse",
    orient: "auto-start-reverse"}, defs);
  sv("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#555"}, m);
  for (const key of [...open].sort()) frame(key, L);
  for (const [ua, ub, a, b, times] of L.edges) {  // times: reads of one box by another
    const A = L.U.get(ua), B = L.U.get(ub), y1 = A.y + A.h, y2 = B.y, dy = (y2 - y1) / 2;
    const hot = cur && cur.n === b && recv.has(a), from = N[A.members[0]].k;
    const faint = ua[0] === "n" && (from === "param" || from === "const");  // weights: light
    sv("path", {class: "edge" + (hot ? " hot" : faint ? " faint" : ""), "marker-end": "url(#arrow)",
      d: `M ${A.x} ${y1} C ${A.x} ${y1 + dy} ${B.x} ${y2 - dy} ${B.x} ${y2}`}, svg);
    if (times > 1) {
      sv("text", {class: "times", x: (A.x + B.x) / 2 + 6, y: y1 + dy}, svg, "×" + times);
    }
  }
  let width = 0;
  for (const u of L.units) {
    const group = u.key[0] === "g", i = u.members[0];
    const cls = ["node", group ? "group" : N[i].k];
    if (u.members.some(j => hits.has(j))) cls.push("hit");
    if (u.members.some(j => recv.has(j))) cls.push("recv");
    if (cur && u.members.includes(cur.n)) cls.push("cur");
    const g = sv("g", {class: cls.join(" "), id: group ? "" : "n" + i,
      "data-members": u.members.length}, svg);
    if (group) g.setAttribute("data-group", u.key.slice(1).split(SEP).join("/"));
    sv("rect", {x: u.x - u.w / 2, y: u.y, width: u.w, height: u.h, rx: 6}, g);
    u.lines.forEach((s, j) => sv("text", {x: u.x - u.w / 2 + 8, y: u.y + 17 + 15 * j,
      class: j === 0 ? "title" : j === 2 && !group && k > 0 ? "sum" : ""}, g, s));
    g.addEventListener("mouseenter", () => showInfo(u));
    if (group) g.addEventListener("click", () => {  // open it; a "× T" box: show its steps
      if (u.key.endsWith(SEP + MERGED)) merged = mergeBox.checked = false;
      else open.add(u.key.slice(1));
      render();
    });
    width = Math.max(width, u.x + u.w / 2 + 12);
  }
  svg.setAttribute("width", width);
  svg.setAttribute("height", L.height);
  document.getElementById("count").textContent = fill(S.nodes, {k: L.units.length});
}

function frame(key, L) {  // an open group: a dashed box around its boxes; its label closes it
  const frames = key.split(SEP);
  const inside = L.units.filter(u => u.members.every(i => N[i].sc.slice(0, frames.length)
    .join(SEP) === key));
  if (!inside.length) return;
  const x0 = Math.min(...inside.map(u => u.x - u.w / 2)) - 6, y0 = Math.min(...inside.map(
    u => u.y)) - 18, x1 = Math.max(...inside.map(u => u.x + u.w / 2)) + 6,
    y1 = Math.max(...inside.map(u => u.y + u.h)) + 6;
  const g = sv("g", {class: "frame", "data-open": frames.join("/")}, svg);
  sv("rect", {x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 4}, g);
  const t = sv("text", {x: x0 + 4, y: y0 + 12}, g, "▾ " + frames[frames.length - 1]);
  t.addEventListener("click", () => {
    for (const o of [...open]) if (o === key || o.startsWith(key + SEP)) open.delete(o);
    render();
  });
}

function showInfo(u) {
  const info = document.getElementById("info");
  if (u.key[0] === "g") {
    info.textContent = "▸ " + u.key.slice(1).split(SEP).join("/") + "\n" +
      fill(S.nodes, {k: u.members.length}) + "\n" + u.members.slice(0, 40).map(name).join("\n");
    return;
  }
  const i = u.members[0], n = N[i];
  info.textContent = name(i) + "  (" + n.k + ")" + (n.sc.length ? "  " + n.sc.join("/") : "") +
    "\n(" + n.s.join(",") + ") " + n.d + "\n\n" + S.value + "\n" + full(n.v, n.s) + "\n\n" +
    S.grad + "\n" + full(n.g, n.s) + (n.in.length ? "\n\n" + S.reads + ": " +
    n.in.map(p => "n" + p).join(" ") : "");
}

function jump(i) {  // show node i: open the groups around it, mark it, scroll to it
  N[i].sc.forEach((f, d) => open.add(N[i].sc.slice(0, d + 1).join(SEP)));
  hits = new Set([i]);
  render();
  const view = document.getElementById("view"), v = view.getBoundingClientRect();
  const r = document.getElementById("n" + i).getBoundingClientRect();  // scroll the graph only:
  view.scrollLeft += r.x + r.width / 2 - v.x - v.width / 2;           // the panel stays put
  view.scrollTop += r.y + r.height / 2 - v.y - v.height / 2;
  showInfo({key: "n" + i, members: [i]});
}

// ---- heatmaps: α_tj over the source, with reading aids (source 003 §6) ---------------------
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
function softmax(e) {  // α_j = exp(e_j − max e) / Σ_k exp(e_k − max e)
  const m = Math.max(...e), x = e.map(v => Math.exp(v - m)), z = x.reduce((a, b) => a + b, 0);
  return x.map(v => v / z);
}
const entropy = a => -a.reduce((h, p) => h + (p > 0 ? p * Math.log(p) : 0), 0);  // nats
function colour(v) {  // 0..1: white to dark blue; below 0: to red
  const a = Math.min(1, Math.abs(v));
  return v >= 0 ? `rgb(${255 - 247 * a}, ${255 - 207 * a}, ${255 - 148 * a})`
    : `rgb(255, ${255 - 200 * a}, ${255 - 200 * a})`;
}
function aidsOf(M, src) {  // row sums, entropies H_t = −Σ_j α ln α, the argmax path, <eos> mass
  const n = src.length, before = M.slice(0, -1);
  return {sums: M.map(r => r.reduce((a, b) => a + b, 0)),
    H: M.map(entropy),
    path: M.map(r => r.indexOf(Math.max(...r))),
    eos: src[n - 1] === "<eos>" && before.length ?
      before.reduce((m, r) => m + r[n - 1], 0) / before.length : null};
}
function heatmap(box, id, A, note) {  // a table; paint(M, colours) shows α = M and its aids
  const table = el("table", {id: id, class: A.src.length > 8 ? "heat" : "heat big"}, undefined,
    box);
  const head = el("tr", {}, undefined, table), ends = [];
  el("th", {}, "", head);
  A.src.forEach((s, j) => el("th", {"data-col": j}, s, head));
  el("th", {class: "aid"}, "Σ", head);
  el("th", {class: "aid"}, "H", head);
  const cells = A.tgt.map((tok, t) => {
    const tr = el("tr", {}, undefined, table);
    el("th", {"data-row": t}, tok, tr);
    const row = A.src.map((_, j) => el("td", {"data-row": t, "data-col": j}, "", tr));
    ends.push([el("th", {class: "aid"}, "", tr), el("th", {class: "aid"}, "", tr)]);
    return row;
  });
  const aids = el("div", {class: "aids"}, "", box);
  table.addEventListener("mouseover", e => {  // a target token: its row; a source token: column
    const t = e.target.getAttribute("data-row"), j = e.target.getAttribute("data-col");
    cells.forEach((row, r) => row.forEach((td, c) => td.classList.toggle("lit",
      (t !== null && +t === r) || (j !== null && +j === c))));
  });
  const paint = (M, shade) => {
    const a = aidsOf(M, A.src), mean = a.H.reduce((x, y) => x + y, 0) / a.H.length;
    cells.forEach((row, t) => row.forEach((td, j) => {
      td.style.background = colour(shade ? shade(t, j) : M[t][j]);
      td.textContent = a.path[t] === j ? "•" : "";
      td.classList.toggle("max", a.path[t] === j);
    }));
    ends.forEach(([sum, h], t) => {
      sum.textContent = a.sums[t].toFixed(2);
      h.textContent = a.H[t].toFixed(2);
    });
    while (aids.firstChild) aids.removeChild(aids.firstChild);
    el("div", {class: "rowsum"}, fill(S.rowsum, {lo: num(Math.min(...a.sums), 4),
      hi: num(Math.max(...a.sums), 4)}), aids);
    el("div", {class: "entropy"}, fill(S.entropy, {h: num(mean, 4),
      u: num(Math.log(A.src.length), 4)}), aids);
    el("div", {class: "path"}, fill(S.argmax, {path: a.path.map(j => A.src[j]).join(" ")}), aids);
    if (a.eos !== null) el("div", {class: "eos"}, fill(S.eos, {m: num(a.eos, 3)}), aids);
    el("div", {class: "source"}, note, aids);
  };
  return {cells: cells, paint: paint};
}

// ---- the attention panel (a trained run's page): α_tj, and ∂L/∂e_tj = α_tj g·(h_j − c_t) ----
// A step's numbers: node (its read, or local-p's softmax), gh = g·h_j, gc = g·c_t, de = the
// engine's ∂L/∂e_tj; local-p's also a = softmax(e_t) and G_tj, its gaussian (Luong 2015 §3.2):
// the weight shown is α_tj G_tj and ∂L/∂e_tj = α_tj (G_tj g·h_j − g·c_t). A Transformer's
// A.cross[l] holds layer l's read, its numbers per head k and step t: gh[k][t], gc[k][t] ...
function attentionPanel(A) {
  const box = el("div", {id: "attention"}, undefined, side);
  el("h2", {}, S.attention, box);
  const pick = el("select", {id: "att-mode"}, undefined, box);
  el("option", {value: "alpha"}, S.alpha, pick);
  const grad = el("option", {value: "dalpha"}, S.dalpha, pick);
  const heads = el("select", {id: "att-head"}, undefined, box);  // a Transformer: per head
  heads.hidden = !A.heads;
  el("option", {value: ""}, S.mean, heads);
  (A.heads || []).forEach((layer, l) => layer.forEach((_, k) => el("option",
    {value: l + " " + k}, fill(S.head, {l: l + 1, k: k + 1}), heads)));
  const M = () => (heads.value ? A.heads[heads.value.split(" ")[0]][heads.value.split(" ")[1]]
    : A.alpha);
  const at = t => {  // step t's numbers for the α shown (a Transformer's: the head picked)
    const [l, k] = heads.value.split(" ").map(Number), c = heads.value && (A.cross || [])[l];
    return c ? {node: c.node, gh: c.gh[k][t], gc: c.gc[k][t], de: c.de[k][t], l: l + 1,
      k: k + 1} : A.steps[t];
  };
  const dA = (st, j) => (st.G ? st.G[j] : 1) * st.gh[j];  // ∂L/∂α_tj
  const map = heatmap(box, "att", A, S.read003), info = el("div", {id: "att-info"}, "", box);
  box.insertBefore(info, box.querySelector(".aids"));
  let last = null;  // the cell hovered last: a head picked shows its numbers there
  const show = (t, j) => {
    const st = at(t), a = M()[t][j], al = st && st.a ? st.a[j] : a;
    last = [t, j];
    info.textContent = fill(S.cell, {t: t, tgt: A.tgt[t], src: A.src[j], a: num(a)}) +
      (st ? fill(st.G ? S.formulap : st.k ? S.formulav : S.formula, {a: num(al), G: st.G &&
        num(st.G[j]), gh: num(st.gh[j]), dA: num(dA(st, j)), gc: num(st.gc[0]), l: st.l,
        k: st.k, formula: num(al * (dA(st, j) - st.gc[0])), de: num(st.de[j])}) :
        A.cross && A.cross.length ? S.pickhead : "");
  };
  map.cells.forEach((row, t) => row.forEach((td, j) => {
    td.addEventListener("click", () => { if (at(t)) jump(at(t).node); });
    td.addEventListener("mouseenter", () => show(t, j));
  }));
  const paint = () => {
    const st0 = at(0);
    grad.disabled = !st0;
    grad.textContent = st0 && st0.G ? S.dalphap : st0 && st0.k ? S.dalphav : S.dalpha;
    if (!st0) pick.value = "alpha";
    const top = st0 ? Math.max(...A.tgt.map((_, t) => Math.max(...A.src.map(
      (_, j) => Math.abs(dA(at(t), j)))))) || 1 : 1;
    map.paint(M(), pick.value === "alpha" ? null : (t, j) => dA(at(t), j) / top);
    if (last) show(...last);
  };
  pick.addEventListener("change", paint);
  heads.addEventListener("change", paint);
  paint();
}

// ---- the training panel: loss and held-out exact match per epoch; α at each saved epoch ----
function curves(box, H) {  // loss (left scale) and exact match (0..1, right) over the epochs
  const W = 340, top = 10, bottom = 110, left = 34, right = 306;
  const c = sv("svg", {id: "curves", width: W, height: 134}, box);
  const E = Math.max(1, ...H.map(h => h[0])), most = Math.max(...H.map(h => h[1] || 0)) || 1;
  const x = e => left + (right - left) * e / E, y = (v, m) => bottom - (bottom - top) * v / m;
  sv("path", {class: "axis", d: `M ${left} ${top} V ${bottom} H ${right} V ${top}`}, c);
  for (const [k, m, cls] of [[1, most, "loss"], [2, 1, "exact"]]) {
    const pts = H.filter(h => h[k] !== null).map(h => `${x(h[0])},${y(h[k], m)}`);
    if (pts.length) sv("polyline", {class: cls, points: pts.join(" ")}, c);
    H.filter(h => h[k] !== null).forEach(h => sv("circle", {class: cls, r: 2.5, cx: x(h[0]),
      cy: y(h[k], m)}, c));
  }
  sv("text", {x: 2, y: top + 8}, c, num(most, 3));
  sv("text", {x: right + 3, y: top + 8}, c, "100%");
  sv("text", {x: left, y: bottom + 13}, c, "0");
  sv("text", {x: right - 8, y: bottom + 13}, c, String(E));
  sv("text", {class: "loss", x: left, y: 130}, c, "— " + S.loss);
  sv("text", {class: "exact", x: left + 150, y: 130}, c, "— " + S.exact);
  const mark = sv("line", {id: "epoch-mark", y1: top, y2: bottom}, c);
  return e => { mark.setAttribute("x1", x(e)); mark.setAttribute("x2", x(e)); };
}
function trainingPanel(Tr, A) {
  const box = el("div", {id: "training"}, undefined, side);
  el("h2", {}, S.training, box);
  if (!Tr.history.length) el("div", {class: "warn", id: "no-history"}, S.nohistory, box);
  const move = Tr.history.length ? curves(box, Tr.history) : () => {};
  if (Tr.alpha.length < 2) el("div", {class: "warn", id: "no-align"}, S.noalign, box);
  const slider = el("input", {id: "epoch", type: "range", min: 0, max: Tr.alpha.length - 1,
    value: Tr.alpha.length - 1}, undefined, box), label = el("div", {id: "epoch-label"}, "", box);
  const map = heatmap(box, "train-att", A, S.read000);
  const show = () => {
    const [e, M] = Tr.alpha[slider.value], h = Tr.history.find(r => r[0] === e);
    label.textContent = fill(S.epoch, {e: e, at: h ? fill(S.at, {loss: num(h[1], 4),
      exact: num(h[2], 3)}) : e === 0 ? S.untrained : ""});
    map.paint(M);
    move(e);
  };
  slider.addEventListener("input", show);
  show();
}

// ---- formula playgrounds: the page recomputes each formula as its slider moves -------------
const f6 = x => x.toFixed(6);  // the tables' numbers: 6 decimals
function playground(box, id, title, range, heads, names) {  // a slider and a table to fill
  const div = el("div", {id: id, class: "play"}, undefined, box);
  el("h3", {}, title, div);
  const input = el("input", Object.assign({id: id + "-x", type: "range"}, range), undefined, div);
  const label = el("div", {class: "at"}, "", div), table = el("table", {}, undefined, div);
  const head = el("tr", {}, undefined, table);
  ["", ...heads].forEach(h => el("th", {}, h, head));
  const cells = names.map(n => {
    const tr = el("tr", {}, undefined, table);
    el("th", {}, n, tr);
    return heads.map(() => el("td", {}, "", tr));
  });
  const notes = el("div", {class: "notes"}, "", div);
  const show = (at, columns, lines, shade) => {  // columns[c][j]; shade: the α columns
    label.textContent = at;
    cells.forEach((row, j) => row.forEach((td, c) => {
      td.textContent = f6(columns[c][j]);
      td.style.background = shade.includes(c) ? colour(columns[c][j]) : "";
      td.style.color = shade.includes(c) && columns[c][j] > 0.6 ? "#fff" : "";
    }));
    notes.textContent = lines.join("\n");
  };
  return {input: input, show: show};
}
function playPanel(P) {
  const box = el("div", {id: "playgrounds"}, undefined, side);
  el("h2", {}, S.play, box);
  const A = P.scorer, a4 = playground(box, "play-004", fill(S.play004, {g: A.g.join(", ")}),
    {min: -3, max: 3, step: 0.01, value: -1}, ["e_j", "α_j", "∂L/∂e_j"],
    A.tokens.map((t, j) => t + " (" + A.h[j].join(", ") + ")"));
  a4.input.addEventListener("input", () => {
    const s = +a4.input.value;  // e_j = vᵀ tanh(W_s s + W_h h_j + b)
    const e = A.h.map(h => dot(A.v, A.W_h.map((w, i) => Math.tanh(A.W_s[i][0] * s +
      dot(w, h) + A.b[i]))));
    const al = softmax(e), c = A.h[0].map((_, i) => dot(al, A.h.map(h => h[i])));  // Σ α_j h_j
    const de = al.map((x, j) => x * dot(A.g, A.h[j].map((h, i) => h - c[i])));  // ∂L/∂e_j
    a4.show(fill(S.state, {s: s}), [e, al, de], [fill(S.context, {c: c.map(f6).join(", ")}),
      fill(S.sum, {t: de.reduce((x, y) => x + y, 0).toExponential(1)})], [1]);
  });
  const T3 = P.temperature, a3 = playground(box, "play-003", S.play003,
    {min: -2, max: 2, step: 0.01, value: 0}, ["e_j", "e_j / T", "α_j"], T3.tokens);
  a3.input.addEventListener("input", () => {
    const T = Math.pow(2, +a3.input.value), al = softmax(T3.e.map(e => e / T));  // log2 T
    a3.show(fill(S.temp, {T: num(T, 7)}), [T3.e, T3.e.map(e => e / T), al], [fill(S.ent, {
      h: f6(entropy(al)), m: f6(Math.max(...al)), u: f6(Math.log(al.length))})], [2]);
  });
  const R = P.scaling.rows, keys = R[0].e.map((_, j) => "k" + (j + 1)), a0 = playground(box,
    "play-000", fill(S.play000, {seed: P.scaling.seed}), {min: 0, max: R.length - 1, step: 1,
      value: 2}, ["q·k", "softmax", "q·k/√d", "softmax"], keys);
  a0.input.addEventListener("input", () => {
    const r = R[+a0.input.value], root = Math.sqrt(r.d), scaled = r.e.map(e => e / root);  // /√d
    const raw = softmax(r.e), sc = softmax(scaled);
    a0.show(fill(S.dim, {d: r.d, r: num(root)}), [r.e, raw, scaled, sc], [fill(S.sat, {
      m: f6(Math.max(...raw)), ms: f6(Math.max(...sc)), h: f6(entropy(raw)),
      hs: f6(entropy(sc)), u: f6(Math.log(raw.length))}), fill(S.std, {std: num(r.std[0], 4),
      r: num(root), sstd: num(r.std[1], 4)})], [1, 3]);
  });
  for (const a of [a4, a3, a0]) a.input.dispatchEvent(new Event("input"));
}

// ---- the stepper panel ---------------------------------------------------------------------
function showStep() {
  const box = document.getElementById("step-info"), list = steps();
  document.getElementById("at").textContent = fill(S.step, {k: k, n: list.length});
  while (box.firstChild) box.removeChild(box.firstChild);
  if (k === 0) { el("div", {}, S.start, box); return; }
  const st = list[k - 1], who = name(st.n);
  el("div", {class: "vjp"}, fill(S.vjp, {node: who, id: "n" + st.n, g: full(st.g, N[st.n].s)}),
    box);
  if (st.wrong === "again") el("div", {class: "warn"}, fill(S.again, {node: who}), box);
  if (st.wrong === "early") el("div", {class: "warn"}, fill(S.early, {node: who, id: "n" + st.n,
    g: full(st.g, N[st.n].s), final: full(N[st.n].g, N[st.n].s)}), box);
  for (const [p, share, sum = share] of st.to) {
    const row = el("div", {class: "to", "data-node": p}, "", box);
    row.textContent = fill(S.gets, {node: name(p), share: full(share, N[p].s),
      sum: full(sum, N[p].s)}) + (readers[p] > 1 ? fill(S.twice, {r: readers[p]}) : "");
  }
  if (k < list.length) return;
  if (mode === "engine") { el("div", {class: "ok"}, S.done, box); return; }
  if (D.naive_cut) el("div", {class: "warn"}, fill(S.cut, {k: list.length}), box);
  const bad = N.map((n, i) => i).filter(i => N[i].g !== null &&
    JSON.stringify(sums[i]) !== JSON.stringify(N[i].g));
  for (const i of bad) el("div", {class: "warn"}, fill(S.wrong, {node: name(i),
    naive: full(sums[i], N[i].s), engine: full(N[i].g, N[i].s)}), box);
  if (!bad.length) el("div", {class: "ok"}, S.right, box);
}
function go(to) {
  k = Math.max(0, Math.min(steps().length, to));
  render();
  showStep();
}

// ---- the page ------------------------------------------------------------------------------
const header = el("header", {}, undefined, document.body);
el("h1", {}, D.title || "minigrad", header);
const search = el("input", {id: "search", type: "search", placeholder: S.search}, undefined,
  header);
const hitsLabel = el("span", {id: "hits"}, "", header);
el("span", {id: "count"}, "", header);
const mergeBox = el("input", {id: "merge", type: "checkbox"}, undefined, el("label", {}, undefined,
  header));
mergeBox.checked = merged;
mergeBox.parentNode.hidden = !N.some(n => n.sc.some(f => STEP.test(f)));  // no decoder steps
mergeBox.parentNode.appendChild(document.createTextNode(" " + S.merge));
mergeBox.addEventListener("change", () => { merged = mergeBox.checked; render(); });
const main = el("main", {}, undefined, document.body), side = el("div", {id: "side"}, "", main);
el("div", {id: "view"}, undefined, main).appendChild(svg);
svg.setAttribute("id", "graph");
el("div", {id: "info"}, S.hover, side);
el("h2", {}, S.backward, side);
const pick = el("select", {id: "mode"}, undefined, side);
el("option", {value: "engine"}, S.engine, pick);
el("option", {value: "naive"}, S.naive, pick).disabled = !D.naive.length;  // big: not replayed
const bar = el("div", {}, undefined, side);
for (const [id, label, move] of [["first", "|◀", () => 0], ["back", "◀", () => k - 1],
  ["forward", "▶", () => k + 1], ["last", "▶|", () => Infinity]]) {
  el("button", {id: id}, label, bar).addEventListener("click", () => go(move()));
}
el("span", {id: "at"}, "", bar);
el("div", {id: "step-info"}, "", side);
pick.addEventListener("change", () => { mode = pick.value; go(0); });
document.addEventListener("keydown", e => {
  if (e.target === search || e.target.type === "range") return;  // a slider's own keys
  if (e.key === "ArrowRight") go(k + 1);
  if (e.key === "ArrowLeft") go(k - 1);
});
search.addEventListener("input", () => {
  const q = search.value.trim().toLowerCase();
  hits = new Set(q ? N.map((n, i) => i).filter(i => ("n" + i + " " + N[i].t).toLowerCase()
    .includes(q)) : []);
  for (const i of hits) N[i].sc.forEach((f, d) => open.add(N[i].sc.slice(0, d + 1).join(SEP)));
  hitsLabel.textContent = q ? fill(S.found, {k: hits.size}) : "";
  render();
  const first = svg.querySelector(".hit");
  if (first) first.scrollIntoView({block: "center", inline: "center"});
});
if (D.attention) attentionPanel(D.attention);
if (D.training && D.training.alpha.length) trainingPanel(D.training, D.attention);
if (D.playgrounds) playPanel(D.playgrounds);
go(0);
