/* Who is connected: the dots with `data-presence-seat` (lobby seats and table seats). At the
 * table, the seat of a person known to be away also carries `data-away` and an "offline" label
 * beside its dot: the others see that the player is gone while that player's clock runs on.
 * A computer player has no socket, so it is never "away": its dot is hidden at the table (its
 * robot badge says what it is). While this page is itself offline nobody's presence is known,
 * and nobody is marked. */
import { el } from "./dom.js";
import { gettext } from "./i18n.js";
import { isComputer } from "./sitin.js";

let current = null;

/** Remember the latest `presence.seats` ({seat: sockets}; null: unknown) and paint every dot. */
export function setPresence(seats) {
  current = seats || null;
  paintPresence();
}

/** Paint every dot from what is known (call after re-rendering seats). */
export function paintPresence() {
  document.querySelectorAll("[data-presence-seat]").forEach(function (dot) {
    const on = isOnline(dot.dataset.presenceSeat);
    dot.classList.toggle("online", on);
    dot.title = on ? gettext("online") : gettext("offline");
    dot.setAttribute("aria-label", dot.title);
    const seat = dot.closest("#table-app [data-seat]");
    if (!seat) return;  // a lobby's dot: grey until its player's page connects
    const computer = isComputer(dot.dataset.presenceSeat);
    dot.hidden = computer;
    markAway(seat, dot, current !== null && !on && !computer);
  });
}

/** The seat's `data-away` and its visible "offline" label, right after the dot. */
function markAway(seat, dot, away) {
  seat.toggleAttribute("data-away", away);
  const next = dot.nextElementSibling;
  const label = next && next.classList.contains("away-label") ? next : null;
  if (away && !label) dot.after(el("span", "away-label", gettext("offline")));
  if (!away && label) label.remove();
}

/** Whether `seat` has at least one socket open. */
export function isOnline(seat) {
  return !!current && (current[seat] || 0) > 0;
}
