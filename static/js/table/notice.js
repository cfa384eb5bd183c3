/* Notices that end the player's stay at a table (shared by every game kind). */
import { el } from "./dom.js";
import { gettext } from "./i18n.js";

const LOBBY_URL = "/games/";

/**
 * Tell a player they no longer have a seat, then go to the list of games. Used by the lobby
 * and by the game tables (a seated player can be removed only in the lobby, but a table may
 * learn it late).
 */
export function removedNotice(text) {
  if (document.getElementById("removed-notice")) return;
  const box = el("div", "overlay removed-overlay");
  const panel = el("div", "card removed-panel");
  panel.id = "removed-notice";
  panel.setAttribute("role", "alertdialog");
  panel.setAttribute("aria-live", "assertive");
  panel.appendChild(el("h2", "", text));
  panel.appendChild(el("p", "muted", gettext("Taking you back to the list of games…")));
  const back = el("a", "button", gettext("Back to games"));
  back.href = LOBBY_URL;
  panel.appendChild(back);
  box.appendChild(panel);
  document.body.appendChild(box);
  back.focus();
  setTimeout(function () { location.href = LOBBY_URL; }, 3500);
}

