/* Who is connected: the dots with `data-presence-seat` (lobby seats and table seats); at the
 * table the seat of a player known to be away also carries `data-away`. While this page is
 * itself offline nobody's presence is known. */
import { gettext } from "./i18n.js";

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
    // At the table, the seat itself is marked while its player is known to be away
    // (`data-away`, for the table's stylesheet); nothing is known while this page is offline.
    const seat = dot.closest("#table-app [data-seat]");
    if (seat) seat.toggleAttribute("data-away", current !== null && !on);
  });
}

/** Whether `seat` has at least one socket open. */
export function isOnline(seat) {
  return !!current && (current[seat] || 0) > 0;
}
