/* The table page's tools, for every game kind: the rules in a dialog (the "?" — the game stays
 * open underneath), leaving a game in progress (asked first), "Play again" at game over, and
 * the chat panel (mountTableTools, at the end, puts the last three together).
 */
import { TableChat } from "./chat.js";
import { button } from "./dom.js";
import { gettext } from "./i18n.js";

/**
 * "?": the page's one rules dialog (templates/games/_rules_dialog.html: the game's rules page
 * in a frame, loaded on first open) for the header's #rules-button and any link of a table
 * marked `data-rules-dialog` (Triple Crown's "?" on the felt); each stays a plain link that
 * opens the page in a new tab without JS or <dialog>. Mounted once per page, whoever asks.
 */
export function mountRulesDialog() {
  const dialog = document.getElementById("rules-dialog");
  if (!dialog || !dialog.showModal || dialog.dataset.mounted) return;
  dialog.dataset.mounted = "1";
  const open = function (e) {
    e.preventDefault();
    const frame = document.getElementById("rules-frame");
    if (!frame.getAttribute("src")) frame.setAttribute("src", frame.dataset.src);
    if (!dialog.open) dialog.showModal();
  };
  document.querySelectorAll("#rules-button, [data-rules-dialog]").forEach(function (link) {
    link.addEventListener("click", open);
  });
  dialog.addEventListener("click", function (e) { if (e.target === dialog) dialog.close(); });
}

/** "Leave game": confirm in a dialog, then the form posts to games:quit. */
export function mountQuitDialog() {
  const open = document.getElementById("quit-open");
  const dialog = document.getElementById("quit-dialog");
  if (!open || !dialog || !dialog.showModal) return;
  open.addEventListener("click", function () { dialog.showModal(); });
}

/**
 * The "Play again" button of a finished game, for the results panel. `rematch`: the boot's
 * {id, seated} once a rematch was offered (null before). The first click makes the rematch;
 * later ones join it; a player already seated there just goes to it.
 */
export function rematchButton(rematch) {
  const form = document.getElementById("rematch-form");
  if (!form) return null;
  if (rematch && rematch.seated) {
    const a = document.createElement("a");
    a.className = "button";
    a.dataset.key = "rematch";
    a.href = "/games/" + rematch.id + "/";
    a.textContent = gettext("Go to the rematch");
    return a;
  }
  const label = rematch ? gettext("Join the rematch") : gettext("Play again");
  return button(label, "", "rematch", function (e) {
    e.currentTarget.disabled = true;
    form.submit();
  });
}

/**
 * The parts every table has besides its game: the chat panel (templates/games/_chat.html),
 * "Leave game" (the quit dialog of templates/games/_table_tools.html) and the game-over panel's
 * "Play again". One place for every kind, so no table carries a copy:
 *
 *   const tools = mountTableTools(boot);            // the quit dialog
 *   const conn = connect({ ..., on: { chat: tools.onChat } });
 *   tools.attach(conn);                             // the chat panel, on this socket
 *   onUpdate: tools.follow(frame.events)            // a rematch offered: the button says so
 *   tools.rematchInto(row)                          // in the game-over panel (players only)
 */
export function mountTableTools(boot) {
  mountRulesDialog();
  mountQuitDialog();
  let chat = null;
  const drawn = [];  // the "Play again" buttons on the page, relabelled when a rematch appears
  return {
    onChat(frame) { if (chat) chat.onFrame(frame); },
    attach(conn) {
      const root = document.getElementById("chat");
      if (!root) return;
      chat = new TableChat({ root: root, conn: conn, gameId: boot.game, userId: boot.user_id });
      chat.loadHistory();
      chat.mountJump(document.getElementById("chat-jump"));
    },
    follow(events) {
      (events || []).forEach(function (ev) {
        if (ev.type !== "rematch_offered" || !ev.data) return;
        boot.rematch = { id: ev.data.game_id, seated: ev.data.by === boot.user_id };
        drawn.splice(0).forEach(function (old) {
          const now = rematchButton(boot.rematch);
          if (old.isConnected && now) { old.replaceWith(now); drawn.push(now); }
        });
      });
    },
    rematchInto(row) {
      if (boot.you === null || boot.you === undefined) return;
      const b = rematchButton(boot.rematch);
      if (!b) return;
      row.appendChild(b);
      drawn.push(b);
    },
  };
}
