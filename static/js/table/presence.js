/* Who is connected: the dots with `data-presence-seat` (lobby seats and table seats). */
import { gettext } from "./i18n.js";

let current = {};

/** Remember the latest `presence.seats` ({seat: sockets}) and paint every dot. */
export function setPresence(seats) {
  current = seats || {};
  paintPresence();
}

/** Paint every dot from what is known (call after re-rendering seats). */
export function paintPresence() {
  document.querySelectorAll("[data-presence-seat]").forEach(function (dot) {
    const on = (current[dot.dataset.presenceSeat] || 0) > 0;
    dot.classList.toggle("online", on);
    dot.title = on ? gettext("online") : gettext("offline");
    dot.setAttribute("aria-label", dot.title);
  });
}

/** Whether `seat` has at least one socket open. */
export function isOnline(seat) {
  return (current[seat] || 0) > 0;
}
