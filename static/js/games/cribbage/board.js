/* The cribbage board (SVG): two tracks of 120 holes and the game hole, two pegs per player.
 *
 * Two shapes of the same board:
 * - long (desktops): each player's track is a loop, out along a top row (seat 0 outside,
 *   seat 1 inside it), 1-60 left to right, and back along the matching bottom row, 61-120
 *   right to left, into the game hole (121) at the left end;
 * - folded (phones, where a 60-hole row would make the holes specks): each player has a band
 *   of four rows of 30 that snakes left-right-left-right, seat 0's band above seat 1's; each
 *   row's last hole is numbered at the row's end (30 and 90 at the right, 60 and 120 at the
 *   left).
 * The front peg stands on the score, the back peg where the front one stood before its last
 * move (the engine's `pegs: [{front, back}]`): leap-frogging them is how a real board shows the
 * last score. Pegs move by a CSS transform (transition in static/css/cribbage.css), so a move
 * animates and `prefers-reduced-motion` simply jumps.
 */
import { fmt, gettext } from "../../table/i18n.js";

const NS = "http://www.w3.org/2000/svg";
const X0 = 40;
const DX = 9.2;
const GROUP = 4;

function node(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
  if (parent) parent.appendChild(e);
  return e;
}

function colX(col) { return X0 + col * DX + Math.floor(col / 5) * GROUP; }

/** The long board: one row of 60 out and one back per player. */
const LONG = {
  name: "long",
  cols: 60,
  w: 640,
  h: 92,
  gameHole: { x: 20, y: 46 },
  /** rows[seat][i]: the y of the i-th stretch of 60 holes (out, back). */
  rows: [[12, 80], [30, 62]],
  labels: true,
};

/** The folded board: four rows of 30 per player, snaking. */
const FOLDED = {
  name: "folded",
  cols: 30,
  w: colX(29) + 26,  // room at the right for the rows' numbers
  h: 112,
  gameHole: { x: 20, y: 56 },
  rows: [[12, 24, 36, 48], [64, 76, 88, 100]],
  labels: false,
};

/** Where a peg of `seat` stands for `score` on `layout` (0: the start; 121+: the game hole). */
export function holeAt(layout, seat, score, isBack) {
  const rows = layout.rows[seat];
  if (score <= 0) return { x: isBack ? 14 : 27, y: rows[0] };
  if (score >= 121) return layout.gameHole;
  const i = Math.floor((score - 1) / layout.cols);
  const k = (score - 1) % layout.cols;
  return { x: colX(i % 2 === 0 ? k : layout.cols - 1 - k), y: rows[i] };
}

function draw(svg, layout) {
  svg.setAttribute("viewBox", "0 0 " + layout.w + " " + layout.h);
  svg.dataset.layout = layout.name;
  svg.textContent = "";
  const defs = node("defs", {}, svg);
  const grad = node("linearGradient", { id: "crib-wood", x1: 0, y1: 0, x2: 0, y2: 1 }, defs);
  node("stop", { offset: "0", "stop-color": "#d9a466" }, grad);
  node("stop", { offset: "1", "stop-color": "#b27a3e" }, grad);
  node("rect", { x: 1, y: 1, width: layout.w - 2, height: layout.h - 2, rx: 12,
    fill: "url(#crib-wood)", stroke: "#7a4a1c", "stroke-width": 2 }, svg);
  const last = colX(layout.cols - 1);
  for (let s = 0; s < 2; s++) {
    // The player's colour runs under every row of their track.
    layout.rows[s].forEach(function (y) {
      node("rect", { x: X0 - 5, y: y - 5, width: last - X0 + 10, height: 10, rx: 5,
        class: "track track-" + s }, svg);
    });
  }
  const holes = node("g", { class: "holes" }, svg);
  for (let s = 0; s < 2; s++) {
    layout.rows[s].forEach(function (y) {
      for (let c = 0; c < layout.cols; c++) node("circle", { cx: colX(c), cy: y, r: 2 }, holes);
    });
    node("circle", { cx: 14, cy: layout.rows[s][0], r: 2 }, holes);
    node("circle", { cx: 27, cy: layout.rows[s][0], r: 2 }, holes);
  }
  node("circle", { cx: layout.gameHole.x, cy: layout.gameHole.y, r: 4, class: "game-hole" }, svg);
  if (!layout.labels) {
    // The folded board: each row's last hole numbered where the row ends.
    const labels = node("g", { class: "board-labels folded" }, svg);
    for (let s = 0; s < 2; s++) {
      layout.rows[s].forEach(function (y, i) {
        const right = i % 2 === 0;
        const t = node("text", { x: right ? colX(layout.cols - 1) + 7 : X0 - 7, y: y + 2.4,
          "text-anchor": right ? "start" : "end" }, labels);
        t.textContent = String((i + 1) * layout.cols);
      });
    }
  }
  if (layout.labels) {
    const labels = node("g", { class: "board-labels" }, svg);
    for (let k = 1; k <= 6; k++) {
      const out = node("text", { x: colX(k * 10 - 1), y: 44, "text-anchor": "middle" }, labels);
      out.textContent = String(k * 10);
      if (k < 6) {
        const back = node("text", { x: colX(120 - (60 + k * 10)), y: 54, "text-anchor": "middle" }, labels);
        back.textContent = String(60 + k * 10);
      }
    }
  }
  const pegs = [];
  const plus = [];
  for (let s = 0; s < 2; s++) {
    const back = node("circle", { cx: 0, cy: 0, r: 4.2, class: "peg back peg-" + s }, svg);
    const front = node("circle", { cx: 0, cy: 0, r: 5.2, class: "peg front peg-" + s }, svg);
    front.dataset.seat = String(s);
    pegs.push({ front: front, back: back, score: null });
    plus.push(node("text", { x: 0, y: 0, class: "peg-plus peg-plus-" + s, "text-anchor": "middle" }, svg));
  }
  return { pegs: pegs, plus: plus };
}

/** The board for this screen, drawn into `svg`; redrawn in the other shape when the screen
 *  crosses the phone breakpoint (static/css/table.css: 820px). `onChange` repaints it. */
export function buildBoard(svg, onChange) {
  svg.setAttribute("role", "img");
  const phone = window.matchMedia("(max-width: 820px)");
  const board = { svg: svg, layout: null, pegs: [], plus: [], last: null };
  const make = function () {
    board.layout = phone.matches ? FOLDED : LONG;
    Object.assign(board, draw(svg, board.layout));
  };
  make();
  phone.addEventListener("change", function () {
    make();
    if (board.last) paintBoard(board, board.last.pegs, board.last.names);
    if (onChange) onChange();
  });
  return board;
}

function place(el, at) { el.style.transform = "translate(" + at.x + "px, " + at.y + "px)"; }

/** Move the pegs to `pegs` ([{front, back}] by seat); a front peg that moved shows "+n". */
export function paintBoard(board, pegs, names) {
  board.last = { pegs: pegs, names: names };
  const said = [];
  for (let s = 0; s < 2; s++) {
    const p = pegs[s] || { front: 0, back: 0 };
    const b = board.pegs[s];
    const moved = b.score !== null && p.front > b.score;
    const at = holeAt(board.layout, s, p.front, false);
    place(b.front, at);
    place(b.back, holeAt(board.layout, s, p.back, p.back === 0 && p.front === 0));
    b.front.dataset.score = String(p.front);
    b.back.dataset.score = String(p.back);
    const plus = board.plus[s];
    if (moved) {
      plus.textContent = "+" + (p.front - b.score);
      plus.setAttribute("x", String(Math.max(16, Math.min(board.layout.w - 16, at.x))));
      plus.setAttribute("y", String(at.y > 20 ? at.y - 8 : at.y + 17));
      plus.classList.remove("show");
      void plus.getBBox();  // restart the fade
      plus.classList.add("show");
      b.front.classList.add("moved");
      setTimeout(function () { b.front.classList.remove("moved"); }, 1200);
    }
    b.score = p.front;
    said.push(fmt(gettext("%(name)s %(n)s"), { name: names[s], n: p.front }));
  }
  board.svg.setAttribute("aria-label", gettext("Peg board:") + " " + said.join(", "));
}
