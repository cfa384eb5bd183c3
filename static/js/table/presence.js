/* Who is connected: the dots with `data-presence-seat` (lobby seats and table seats). At the
 * table a seat whose player has no socket open also says so in words beside its dot
 * ("offline"), so an opponent's running clock has its reason on screen. While this page is
 * itself offline nobody's presence is known, and nothing is said. */
import { el } from "./dom.js";
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
    if (!dot.closest("#table-app")) return;
    let word = dot.nextElementSibling;
    if (!word || !word.classList.contains("presence-word")) {
      word = el("span", "presence-word muted small", gettext("offline"));
      dot.after(word);
    }
    word.hidden = current === null || on;
  });
}

/** Whether `seat` has at least one socket open. */
export function isOnline(seat) {
  return !!current && (current[seat] || 0) > 0;
}
