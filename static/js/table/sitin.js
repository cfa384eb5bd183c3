/* Computer players at the table, for every game kind: each seat's badge (a robot and "Medium", or
 * "sitting in" while a computer plays an absent person's seat) and the viewer's own "A
 * computer is playing for you" banner with its "I'm back" button.
 *
 * Who is a computer comes from the page's boot seats (`bot`: a computer player's level, null for
 * a person; `sitting_in`), kept current by the lobby events every update carries (`sitting_in`
 * with its `level`, `seat_back`, `player_left`) and refreshed from the game's card
 * (`GET /api/v1/games/<id>/`) on every snapshot, since a snapshot (a reconnect) carries no
 * events; a card read before a seat change the page has already shown is read again, never
 * painted (its answer can arrive after the update). The connection calls `followSitIn` before
 * the game module renders, so a table that re-renders reads the new badges; `paintBotBadges`
 * also refills the ones already drawn.
 *
 * A game's view draws a seat's badge with `botBadge(seat)`: an element that is empty (and
 * hidden) for a person's seat. The banner is the page's own form (#sitin-form, rendered by
 * templates/games/table.html); this module only shows and hides it. */
import { bootData, el } from "./dom.js";
import { fmt, gettext } from "./i18n.js";
import { record } from "./trace.js";

let mine = null;
/** seat -> {bot: level | null, sitting_in: bool, name, is_guest: bool} */
let seats = null;
/** The game version of the last update whose events changed a seat: a card read before it is
 * stale (its fetch may have been answered after the update arrived) and must not undo it. */
let seatsVersion = -1;

function known() {
  if (seats === null) {
    const boot = bootData();
    mine = boot ? boot.user_id : undefined;
    seats = {};
    ((boot && boot.seats) || []).forEach(function (s) {
      seats[s.seat] = { bot: s.bot || null, sitting_in: !!s.sitting_in, name: s.name, is_guest: !!s.is_guest };
    });
  }
  return seats;
}

function levelWord(level) {
  if (level === "easy") return gettext("Easy");
  if (level === "hard") return gettext("Hard");
  return gettext("Medium");
}

const SVG = "http://www.w3.org/2000/svg";

/** A small robot's head (drawn, not an emoji: it looks the same on every device and font). */
function robotIcon() {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", "bot-icon");
  svg.setAttribute("aria-hidden", "true");
  const parts = [
    ["line", { x1: 8, y1: 1.5, x2: 8, y2: 4, "stroke-width": 1.4 }],
    ["circle", { cx: 8, cy: 1.5, r: 1.2 }],
    ["rect", { x: 2, y: 4, width: 12, height: 10, rx: 2.5 }],
    ["circle", { cx: 5.6, cy: 8.4, r: 1.4, class: "eye" }],
    ["circle", { cx: 10.4, cy: 8.4, r: 1.4, class: "eye" }],
    ["rect", { x: 5.2, y: 11, width: 5.6, height: 1.2, rx: .6, class: "eye" }],
  ];
  parts.forEach(function (p) {
    const node = document.createElementNS(SVG, p[0]);
    Object.keys(p[1]).forEach(function (k) { node.setAttribute(k, p[1][k]); });
    svg.appendChild(node);
  });
  return svg;
}

function fill(badge) {
  const s = known()[badge.dataset.botSeat];
  badge.textContent = "";
  // A guest's seat (issue 24) wears a plain "guest" badge in the same place, unless a computer
  // is sitting in for them (that says more).
  const guest = !!(s && s.is_guest && !s.bot && !s.sitting_in);
  badge.hidden = !(s && (s.bot || s.sitting_in)) && !guest;
  badge.classList.toggle("sitting-in", !!(s && s.sitting_in));
  badge.classList.toggle("guest-badge", guest);
  if (guest) {
    badge.appendChild(el("span", "bot-text", gettext("guest")));
    badge.title = fmt(gettext("%(name)s is playing as a guest"), { name: s.name });
    badge.setAttribute("aria-label", badge.title);
    return;
  }
  if (badge.hidden) {
    badge.removeAttribute("title");
    badge.removeAttribute("aria-label");
    return;
  }
  const text = s.sitting_in ? gettext("sitting in") : levelWord(s.bot);
  const label = s.sitting_in
    ? fmt(gettext("A computer player is playing for %(name)s while they are away"), { name: s.name })
    : fmt(gettext("Computer player, level: %(level)s"), { level: levelWord(s.bot) });
  badge.appendChild(robotIcon());
  badge.appendChild(el("span", "bot-text", text));
  badge.title = label;
  badge.setAttribute("aria-label", label);
}

/** A seat's computer-player badge (hidden for a person's seat); repainted as seats change. */
export function botBadge(seat) {
  const badge = el("span", "badge bot-badge seat-bot");
  badge.dataset.botSeat = String(seat);
  fill(badge);
  return badge;
}

/** Whether a computer player holds `seat` (not a person, sitting in or not): it has no socket,
 * so presence.js never calls it away. */
export function isComputer(seat) {
  const s = known()[seat];
  return !!(s && s.bot);
}

/** Refill every drawn badge from what is known now. */
export function paintBotBadges() {
  document.querySelectorAll("[data-bot-seat]").forEach(fill);
}

function showBanner(hidden) {
  const form = document.getElementById("sitin-form");
  if (form) form.hidden = hidden;
}

/** Follow an update's events (redacted; lobby events are public): badges and the banner.
 * `version` is the update's game version. */
export function followSitIn(events, version) {
  if (!events) return;
  const all = known();
  let changed = false;
  for (const ev of events) {
    const d = ev.data;
    if (!d || typeof d.seat !== "number") continue;
    const seat = all[d.seat] || (all[d.seat] = { bot: null, sitting_in: false, name: d.name, is_guest: !!d.is_guest });
    if (ev.type === "sitting_in") {
      seat.sitting_in = true;
      changed = true;
    } else if (ev.type === "seat_back") {
      seat.sitting_in = false;
      changed = true;
    } else {
      continue;
    }
    if (d.user_id === mine) showBanner(!seat.sitting_in);
  }
  for (const ev of events) {
    if (ev.type === "player_left" && ev.data && ev.data.user_id === mine) showBanner(true);
  }
  if (changed) {
    if (typeof version === "number" && version > seatsVersion) seatsVersion = version;
    paintBotBadges();
  }
}

/** After a snapshot: read the seats again from the game's card (a reconnect has no events),
 * and the viewer's banner with them: a computer may have sat in for this player while their
 * page was away -- which is when they most need "I'm back" -- or they may have come back from
 * another tab. (The page itself shows the banner on the same rule, templates/games/table.html.) */
export function refreshSeats(gameId, tries) {
  if (!gameId || !window.fetch) return;
  const left = typeof tries === "number" ? tries : 3;
  fetch("/api/v1/games/" + gameId + "/", { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (card) {
      if (!card || !card.seats) return;
      if (card.version < seatsVersion) {
        // Read before a seat change this page has already shown: ask again rather than undo it
        // (a reconnect still needs the card for what changed while the page was away).
        if (left > 0) refreshSeats(gameId, left - 1);
        return;
      }
      const all = known();
      card.seats.forEach(function (s) {
        all[s.seat] = { bot: s.bot || null, sitting_in: !!s.sitting_in, name: s.name, is_guest: !!s.is_guest };
        if (s.user_id === mine) showBanner(!s.sitting_in || !!s.left);
      });
      paintBotBadges();
    })
    .catch(function () { /* the boot's and the events' seats stay */ });
}

/** Forget the seats read so far (the table's page replaced the lobby's: its boot is newer). */
export function resetSeats() {
  seats = null;
  seatsVersion = -1;
}

const BACK_WORDS = {
  already_left: gettext("You have left this game."),
  game_over: gettext("The game is over."),
  not_seated: gettext("You have no seat at this game."),
};

/** "I'm back" in place: the banner's form is sent without leaving the page (a reload would
 * throw away what the table is showing -- an opening look during "memorise!"). Nobody sitting
 * in any more is not an error: the player's own move (the opening look the table takes at
 * once) already took the seat back. `onError(text)` says any other refusal. */
export function mountImBack(gameId, onError) {
  const form = document.getElementById("sitin-form");
  if (!form || !window.fetch) return;
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    const token = form.querySelector("input[name=csrfmiddlewaretoken]");
    const btn = form.querySelector("button");
    if (btn) btn.disabled = true;
    const done = function () { if (btn) btn.disabled = false; };
    fetch("/api/v1/games/" + gameId + "/back/", {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": token ? token.value : "" },
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) {
        done();
        if (r.ok || body.code === "not_sat_in") {
          showBanner(true);
          record("back", { code: r.ok ? "ok" : body.code });
          return;
        }
        if (onError) onError(BACK_WORDS[body.code] || body.detail || gettext("Not connected — the action was not sent."));
      });
    }, function () {
      done();
      if (onError) onError(gettext("Not connected — the action was not sent."));
    });
  });
}
