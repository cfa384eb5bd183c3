/* The view parts every game's table draws the same way (issue 22: "shared view parts"): the
 * status bar, the score table, the action box and the end of a results dialog. A game's
 * view.js calls them with its own words and columns; they know no game.
 *
 * Like view.js they draw from the controller object `t` only (the live table's, or a replay's
 * read-only one: `t.root`, `t.replay`), so whatever only a live table has (the page title, the
 * finished chip, the countdown, buttons) is left out when `t.replay` is set.
 */
import { leftText, serverNow } from "./clock.js";
import { el } from "./dom.js";
import { fmt, gettext, ngettext } from "./i18n.js";
import { paintPresence } from "./presence.js";

/** Draw the whole table from `st`, in the order every game's page has: the game's `view.felt`
 *  (its seats, cards, centre), its `view.actions` (a live table only), `view.status`,
 *  `view.scores`, its `view.dialog` (a round's results; optional), then the seats' presence
 *  dots (a live table only). */
export function drawTable(t, st, baseTitle, view) {
  view.felt(t, st);
  if (!t.replay) view.actions(t, st);
  view.status(t, st, baseTitle);
  view.scores(t, st);
  if (view.dialog) view.dialog(t, st);
  if (!t.replay) paintPresence();
}

/** The element `id` of this table: inside `t.root` (a replay's board), else in the page. */
export function part(t, id) {
  return t.root ? t.root.querySelector("#" + id) : document.getElementById(id);
}

/** The status bar (`#status-bar`) and what goes with it on a live page:
 *  - the page title, "● Your turn · " (or `o.word`) in front of `o.title` while `o.yourMove`;
 *  - the header's status chip turned to "Finished" once `st.status` is;
 *  - the bar itself: `o.text`, then the countdown to the server instant `o.until`
 *    (`#table-clock`, with `o.clockTitle` as its tooltip; never in a replay, whose clock does
 *    not run), then the game's own `o.after` elements (a target, a caller). */
export function statusBar(t, st, o) {
  if (!t.replay) {
    document.title = (o.yourMove ? "● " + (o.word || gettext("Your turn")) + " · " : "") + (o.title || "");
    const chip = document.querySelector(".status-chip");
    if (chip && st.status === "finished" && !chip.classList.contains("status-finished")) {
      chip.className = "chip status-chip status-finished";
      chip.textContent = gettext("Finished");
    }
  }
  const bar = part(t, "status-bar");
  bar.textContent = "";
  bar.classList.toggle("yours", !!o.yourMove);
  bar.appendChild(el("span", "status-text", o.text || ""));
  if (o.until && !t.replay) {
    // A turn-based move's clock reads in hours and days (clock.js's leftText).
    const c = el("span", "countdown big clock", leftText(o.until - serverNow()));
    c.id = "table-clock";
    c.dataset.until = String(o.until);
    if (o.clockTitle) c.title = o.clockTitle;
    bar.appendChild(c);
  }
  (o.after || []).forEach(function (node) { if (node) bar.appendChild(node); });
  return bar;
}

/** A score table, `.scores-wrap > table.scores` (table.css pins its first column, the
 *  player's name, and its last, the running Total, so neither is ever cut off): a row per seat,
 *  the winners' marked. `o`: `columns` between the name and the Total, each `{head, title,
 *  cls, cell(s)}` (`cls` for both its heading and its cells, "num" unless given; a cell is text
 *  or a node); `name(s)` -> text or a node for the first column (by default `youOr`); `cls`,
 *  more classes for the table. */
export function scoresTable(t, st, o) {
  const table = el("table", "scores" + (o.cls ? " " + o.cls : ""));
  const thead = el("thead");
  const hr = el("tr");
  hr.appendChild(el("th", "", gettext("Player")));
  o.columns.forEach(function (x) {
    const th = el("th", x.cls === undefined ? "num" : x.cls, x.head);
    if (x.title) th.title = x.title;
    hr.appendChild(th);
  });
  hr.appendChild(el("th", "num total", gettext("Total")));
  thead.appendChild(hr);
  table.appendChild(thead);
  const tb = el("tbody");
  for (let s = 0; s < st.seats; s++) {
    const tr = el("tr", st.winners.indexOf(s) >= 0 ? "winner" : "");
    tr.appendChild(cell("", o.name ? o.name(s) : youOr(t, s)));
    o.columns.forEach(function (x) { tr.appendChild(cell(x.cls === undefined ? "num" : x.cls, x.cell(s))); });
    tr.appendChild(el("td", "num total", String(st.scores[s])));
    tb.appendChild(tr);
  }
  table.appendChild(tb);
  const wrap = el("div", "scores-wrap");
  wrap.appendChild(table);
  wrap.addEventListener("scroll", function () { markEdges(wrap); }, { passive: true });
  requestAnimationFrame(function () { markEdges(wrap); });  // once it is on the page
  return wrap;
}

/** `data-left` / `data-right` on a score table's wrap while columns are scrolled out of sight
 *  on that side (table.css shades the pinned column's edge there). */
function markEdges(wrap) {
  const left = wrap.scrollLeft > 1;
  const right = wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1;
  if (wrap.hasAttribute("data-left") !== left) wrap.toggleAttribute("data-left", left);
  if (wrap.hasAttribute("data-right") !== right) wrap.toggleAttribute("data-right", right);
}

function cell(cls, content) {
  const td = el("td", cls);
  if (typeof content === "string") td.textContent = content;
  else if (content) td.appendChild(content);
  return td;
}

/** The side panel's score table in `#scoreboard`: one component for every game, and it never
 *  clips. A column per round (`o.rounds`, e.g. `st.history`: `head(n)` -> [short, long], "R1"
 *  and "Round 1"; `cell(round, s)` -> text), the game's `extra` columns, then the Total; the
 *  rounds scroll sideways between the pinned name and Total, opening at the latest, and a
 *  place the player scrolled to is kept across redraws. `o.name` as `scoresTable`'s; `note`,
 *  the line under the table. Returns the box, for a game to add to. */
export function scoreTable(t, st, o) {
  const box = part(t, "scoreboard");
  const before = box.querySelector(".scores-wrap");
  const kept = before && before.dataset.moved === "1" ? before.scrollLeft : null;
  box.textContent = "";
  const rounds = o.rounds.map(function (r, i) {
    const words = o.head(i + 1);
    return { head: words[0], title: words[1], cls: "num round", cell: function (s) { return o.cell(r, s); } };
  });
  const wrap = scoresTable(t, st, { columns: rounds.concat(o.extra || []), name: o.name });
  box.appendChild(wrap);
  wrap.scrollLeft = kept === null ? wrap.scrollWidth : kept;
  if (kept !== null) wrap.dataset.moved = "1";
  markEdges(wrap);
  wrap.addEventListener("scroll", function () {
    wrap.dataset.moved = wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 2 ? "1" : "";
  }, { passive: true });
  if (o.note) box.appendChild(el("p", "muted small", o.note));
  return box;
}

/** A seat's name as the viewer reads it in a list: "Ann (you)" for their own. */
export function youOr(t, s) {
  return s === t.you ? fmt(gettext("%(name)s (you)"), { name: t.names[s] || "" }) : (t.names[s] || "");
}

/** The action box (`#actions`), emptied; for someone watching it says so and null is
 *  returned (a spectator has no moves). */
export function actionBox(t) {
  const box = part(t, "actions");
  box.textContent = "";
  if (t.you !== null) return box;
  box.appendChild(el("p", "muted", gettext("You are watching this game.")));
  return null;
}

/** A results panel (`.reveal-panel.card`, with the game's `cls`) titled `title` (an h2 with
 *  the id `titleId`); live, a modal dialog; in a replay, drawn beside the table. */
export function dialogPanel(t, cls, titleId, title) {
  const panel = el("div", "reveal-panel card" + (cls ? " " + cls : ""));
  if (!t.replay) {
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-modal", "true");
  }
  panel.setAttribute("aria-labelledby", titleId);
  const h = el("h2", "", title);
  h.id = titleId;
  panel.appendChild(h);
  return panel;
}

/** The winners' line of a game-over dialog: "★ You win! ★", or the winners' names. */
export function winnersLine(t, winners) {
  if (winners.indexOf(t.you) >= 0) return el("p", "winners", "★ " + gettext("You win!") + " ★");
  const names = winners.map(function (s) { return t.names[s]; }).join(", ");
  return el("p", "winners", fmt(ngettext("Winner: %(names)s", "Winners: %(names)s", winners.length), { names: names }));
}

/** The buttons under a results dialog: `close` (the game's own), and once the game is `over`,
 *  "Play again" (the controller's `t.rematch`) and "Back to games". */
export function dialogActions(t, over, close) {
  const row = el("div", "reveal-actions");
  row.appendChild(close);
  if (over) {
    if (t.rematch) t.rematch(row);
    const back = el("a", "button secondary", gettext("Back to games"));
    back.href = "/games/";
    row.appendChild(back);
  }
  return row;
}
