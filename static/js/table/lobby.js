/* A game's own lobby page (before the start), for every game kind: the seats fill live, the
 * invite can be copied, and a player the host removed is told at once and taken back to the
 * list of games.
 *
 * The page is server-rendered; any change of its seats or status means a fresh page (cheap, and
 * the server decides what the viewer may see).
 */
import { connect } from "./connection.js";
import { bootData } from "./dom.js";
import { gettext } from "./i18n.js";
import { removedNotice } from "./notice.js";
import { setPresence } from "./presence.js";
import { mountRulesDialog } from "./tools.js";

/** Copy buttons: `data-copy="<input id>"` copies that input's value. */
export function mountCopyButtons(root) {
  (root || document).querySelectorAll("[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      const input = document.getElementById(btn.getAttribute("data-copy"));
      input.select();
      const done = function () {
        const old = btn.textContent;
        btn.textContent = gettext("Copied!");
        setTimeout(function () { btn.textContent = old; }, 1500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done, function () {});
      } else {
        try { document.execCommand("copy"); done(); } catch (e) { /* selected is enough */ }
      }
    });
  });
}

function mine(ev, boot) {
  return ev.data && ev.data.user_id === boot.user_id;
}

/** Start the lobby page: live seats, copy buttons, removal notice. */
export function startLobby() {
  const boot = bootData();
  mountCopyButtons();
  mountRulesDialog();
  if (!boot) return;
  let seated = boot.you !== null && boot.you !== undefined;
  const status = boot.status;
  // Someone who opened a private game's invite link is not seated yet: the socket would refuse
  // them (only players watch a private game), and the page's "Take a seat" is all they need.
  if (!seated && boot.private) return;
  const onState = function (frame) {
    const events = frame.events || [];
    if (seated && events.some(function (ev) { return ev.type === "seat_kicked" && mine(ev, boot); })) {
      seated = false;
      removedNotice(gettext("The host removed you from this game."));
      return;
    }
    const newStatus = frame.state ? frame.state.status : status;
    if (events.length || newStatus !== status) { location.reload(); }
  };
  connect({
    gameId: boot.game,
    wsPath: boot.ws,
    onSnapshot: function (f) {
      if (f.state && f.state.status !== status) location.reload();
    },
    onUpdate: onState,
    onPresence: function (f) { setPresence(f ? f.seats : {}); },
    onClosed: function (code) {
      // A seated player of a private game loses sight of it when removed: the socket is closed
      // 4404 instead of carrying the removal. Anyone else just stays on the page (e.g. someone
      // who opened an invite link and has not taken a seat yet).
      if (seated && code === 4404) removedNotice(gettext("The host removed you from this game."));
    },
  });
}

startLobby();
