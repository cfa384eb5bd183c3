/* A game's own lobby page (before the start), for every game kind: the seats fill live, the
 * invite can be copied, and a player the host removed is told at once and taken back to the
 * list of games. The table controller (controller.js) runs it while the game is in its lobby.
 *
 * The page is server-rendered (the server decides what the viewer may see and do); a change of
 * its seats fetches the same page and puts its new lobby part in place -- never a reload, which
 * would abort a click's own page load ("Take a seat", "Start the game"). When the game starts,
 * `fetchPage` and `swapIn` turn the whole page into the table's, in place.
 */
import { gettext } from "./i18n.js";
import { removedNotice } from "./notice.js";
import { paintPresence } from "./presence.js";
import { toast } from "./toast.js";
import { mountRulesDialog } from "./tools.js";
import { record } from "./trace.js";

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

const LOBBY_PART = ".lobby-grid";

export class LobbyPage {
  constructor(boot) {
    this.boot = boot;
    this.seated = boot.you !== null && boot.you !== undefined;
    this.fetching = null;   // the page fetch under way
    this.stale = false;     // a seat changed and the page has not read the seats again yet
    this.again = false;     // something changed while it was under way
    mountCopyButtons();
    mountRulesDialog();
    // Someone who opened a private game's invite link is not seated yet: the socket would
    // refuse them (only players watch a private game), and the page's "Take a seat" is all
    // they need.
    this.watch = this.seated || !boot.private;
    // "Start the game" in place: the socket's update that says the game started turns this
    // page into the table (the form's own page load would cost the first round's opening look).
    document.addEventListener("submit", (e) => {
      const form = e.target;
      if (!this.watch || !form.matches || !form.matches("form[data-start-game]") || !window.fetch) return;
      e.preventDefault();
      this.start(form);
    });
    // Nothing is put in place under a click: not between its press and its release (the
    // button pressed would be another node by the release, and the click lost -- CI saw one
    // "Take a seat" of seven never sent), nor once a form is on its way (the page is leaving).
    this.pressed = false;   // a pointer is down
    this.held = false;      // a fresh lobby part waits for its release
    this.leaving = false;   // a form was sent the ordinary way: the next page is coming
    document.addEventListener("pointerdown", () => { this.pressed = true; }, true);
    const release = () => {
      if (!this.pressed) return;
      this.pressed = false;
      if (this.held) { this.held = false; setTimeout(() => this.refresh(), 0); }
    };
    document.addEventListener("pointerup", release, true);
    document.addEventListener("pointercancel", release, true);
    document.addEventListener("submit", (e) => { if (!e.defaultPrevented) this.leaving = true; });
  }

  start(form) {
    const btn = form.querySelector("button");
    if (btn) btn.disabled = true;
    const token = form.querySelector("input[name=csrfmiddlewaretoken]");
    fetch("/api/v1/games/" + this.boot.game + "/start/", {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": token ? token.value : "" },
    }).then((r) => {
      if (r.ok) { record("start", {}); return; }
      return r.json().catch(() => ({})).then((body) => {
        if (btn) btn.disabled = false;
        toast(body.detail || gettext("The game could not be started."));
      });
    }, () => {
      if (btn) btn.disabled = false;
      toast(gettext("Not connected — the action was not sent."));
    });
  }

  /** A (re)connection's snapshot: the lobby may have changed while the socket was away. */
  snapshot() { if (this.connectedOnce) this.refresh(); this.connectedOnce = true; }

  update(frame) {
    const events = frame.events || [];
    const me = this.boot.user_id;
    if (this.seated && events.some((ev) => ev.type === "seat_kicked" && ev.data && ev.data.user_id === me)) {
      this.seated = false;
      removedNotice(gettext("The host removed you from this game."));
      return;
    }
    if (events.length) this.refresh();
  }

  /** This same page as the server renders it now (a parsed document). */
  fetchPage() {
    return fetch(location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then((r) => {
        if (!r.ok || r.redirected) throw new Error("page " + r.status);
        return r.text();
      })
      .then((html) => new DOMParser().parseFromString(html, "text/html"));
  }

  /** Put the lobby part of a fresh page in place (the seats, the host's buttons), keeping the
   *  focus and what the viewer was choosing. */
  refresh() {
    this.stale = true;  // the boot's seats may be behind until this fetch is in
    if (this.fetching) { this.again = true; return; }
    this.again = false;
    this.fetching = this.fetchPage().then((doc) => {
      if (!this.again) this.stale = false;
      const boot = doc.getElementById("table-boot");
      if (boot && this.fetching && JSON.parse(boot.textContent).status === "lobby") {
        document.getElementById("table-boot").textContent = boot.textContent;  // the seats now
      }
      const fresh = doc.querySelector(LOBBY_PART);
      const old = document.querySelector(LOBBY_PART);
      if (this.leaving) return;
      if (this.pressed) { this.held = true; return; }  // read again once the click is done
      if (fresh && old && fresh.innerHTML !== old.innerHTML && this.fetching) {
        const active = document.activeElement;
        const focusId = active && old.contains(active) ? active.id : "";
        const values = {};
        old.querySelectorAll("select[id], input[id]:not([readonly])").forEach((f) => { values[f.id] = f.value; });
        old.innerHTML = fresh.innerHTML;
        Object.keys(values).forEach((id) => {
          const f = document.getElementById(id);
          if (f) f.value = values[id];
        });
        mountCopyButtons(old);
        paintPresence();
        if (focusId && document.getElementById(focusId)) document.getElementById(focusId).focus();
        record("lobby", {});
      }
    }).catch(() => { /* offline: the next event or reconnection asks again */ }).then(() => {
      this.fetching = null;
      if (this.again) this.refresh();
    });
  }

  /** The game started: the table this page carries (`<template id="table-markup">`, rendered
   *  with the lobby) takes the lobby's place at once, with the header's "Chat" and "Leave".
   *  The boot is this page's, now "playing" (`refreshBoot` brings the server's). False if the
   *  page has no table to put in place. */
  swapInTable() {
    const markup = document.getElementById("table-markup");
    const grid = document.querySelector(LOBBY_PART);
    const bootNode = document.getElementById("table-boot");
    if (!markup || !grid || !bootNode) return false;
    this.fetching = null;
    this.again = false;
    grid.replaceWith(markup.content.cloneNode(true));
    markup.remove();
    const rules = document.getElementById("rules-button");
    const chat = document.getElementById("chat-jump-markup");
    if (chat && rules) rules.before(chat.content.cloneNode(true));
    const quit = document.getElementById("quit-markup");
    if (quit && rules) rules.after(quit.content.cloneNode(true));
    const chip = document.querySelector(".status-chip[data-playing]");
    if (chip) {
      chip.textContent = chip.dataset.playing;
      chip.className = "chip status-chip status-playing";
    }
    const page = document.querySelector(".table-page");
    if (page) page.dataset.status = "playing";
    const boot = JSON.parse(bootNode.textContent);
    boot.status = "playing";
    bootNode.textContent = JSON.stringify(boot);
    return true;
  }

  /** The server's boot for the page as it is now (the seats' names as they were at the
   *  start): resolves with it, after writing it into the page. The controller asks only when
   *  a seat changed that the page has not read yet (`stale`): at a deal the server has looks
   *  to answer, not pages to render. */
  refreshBoot() {
    return this.fetchPage().then((doc) => {
      const fresh = doc.getElementById("table-boot");
      if (!fresh) return null;
      document.getElementById("table-boot").textContent = fresh.textContent;
      if (doc.title) document.title = doc.title;
      const h1 = doc.querySelector(".table-head h1");
      const old = document.querySelector(".table-head h1");
      if (h1 && old) old.innerHTML = h1.innerHTML;
      return JSON.parse(fresh.textContent);
    });
  }

  /** The game started: `doc` (a fresh page, now the table's) replaces this page's content.
   *  The connection banner stays the same node (the connection holds it). */
  swapIn(doc) {
    this.fetching = null;
    this.again = false;
    const page = document.querySelector(".table-page");
    const fresh = doc.querySelector(".table-page");
    const boot = doc.getElementById("table-boot");
    if (!page || !fresh || !boot) { location.reload(); return; }
    const conn = document.getElementById("conn");
    const newConn = fresh.querySelector("#conn");
    if (conn && newConn) newConn.replaceWith(conn);
    page.replaceChildren(...Array.from(fresh.childNodes));
    page.dataset.status = fresh.dataset.status || "";
    document.getElementById("table-boot").textContent = boot.textContent;
    if (doc.title) document.title = doc.title;
  }
}
