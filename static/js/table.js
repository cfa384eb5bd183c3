/* Crisp online — the live table.
 *
 * No framework, no build step. Speaks the public WebSocket protocol (docs/PROTOCOL.md):
 *   server → client: snapshot, update (prev_version/version, events, state), ack, error,
 *                    presence, pong — each stamped with server_time (ms);
 *   client → server: act {id, action, version, idempotency_key}, resync {version}, ping {id}.
 *
 * Private looks (opening look, Jack, Queen receipt) arrive once, in an event. They are shown for
 * a short time and then dropped from memory (R3/R4): nothing is written to storage, and the
 * redacted state never carries them again.
 */
(function () {
  "use strict";

  var gettext = window.gettext || function (s) { return s; };
  var ngettext = window.ngettext || function (s, p, n) { return n === 1 ? s : p; };
  var fmt = function (s, o) {
    return window.interpolate ? window.interpolate(s, o, true)
      : s.replace(/%\((\w+)\)s/g, function (_, k) { return o[k]; });
  };

  var bootEl = document.getElementById("table-boot");
  if (!bootEl) return;
  var boot = JSON.parse(bootEl.textContent);
  var app = document.getElementById("table-app");
  var connEl = document.getElementById("conn");

  // --- copy buttons (lobby) -------------------------------------------------------------------
  document.querySelectorAll("[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var input = document.getElementById(btn.getAttribute("data-copy"));
      input.select();
      var done = function () {
        var old = btn.textContent;
        btn.textContent = gettext("Copied!");
        setTimeout(function () { btn.textContent = old; }, 1500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done, function () {});
      } else {
        try { document.execCommand("copy"); done(); } catch (e) { /* select is enough */ }
      }
    });
  });

  // --- cards ----------------------------------------------------------------------------------
  var SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  var SUIT_NAME = { S: gettext("spades"), H: gettext("hearts"), D: gettext("diamonds"), C: gettext("clubs") };
  var RANK_NAME = { A: gettext("ace"), T: "10", J: gettext("jack"), Q: gettext("queen"), K: gettext("king") };
  var PLACES = ["left", "centre", "right"];
  var PLACE_WORD = { left: gettext("left"), centre: gettext("centre"), right: gettext("right") };

  function rankText(code) { return code[0] === "T" ? "10" : code[0]; }
  function cardText(code) { return code ? rankText(code) + SUIT[code[1]] : "?"; }
  function cardSpoken(code) {
    return fmt(gettext("%(rank)s of %(suit)s"), {
      rank: RANK_NAME[code[0]] || code[0], suit: SUIT_NAME[code[1]],
    });
  }
  function cardValue(code) {
    var r = code[0];
    if (r === "A") return 1;
    if ("TJQK".indexOf(r) >= 0) return 10;
    return parseInt(r, 10);
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  /** A card drawn in CSS: corners with rank + suit, a big pip (or the court letter) in the middle. */
  function cardFace(code, extra) {
    var red = code[1] === "H" || code[1] === "D";
    var c = el("span", "pcard face " + (red ? "red" : "black") + (extra ? " " + extra : ""));
    c.setAttribute("role", "img");
    c.setAttribute("aria-label", cardSpoken(code));
    var tl = el("span", "corner tl");
    tl.appendChild(el("span", "r", rankText(code)));
    tl.appendChild(el("span", "s", SUIT[code[1]]));
    var br = tl.cloneNode(true);
    br.className = "corner br";
    c.appendChild(tl);
    var mid = el("span", "pip" + ("JQK".indexOf(code[0]) >= 0 ? " court" : ""));
    mid.textContent = "JQK".indexOf(code[0]) >= 0 ? code[0] + SUIT[code[1]] : SUIT[code[1]];
    c.appendChild(mid);
    c.appendChild(br);
    return c;
  }
  function cardBack(extra) {
    var c = el("span", "pcard back" + (extra ? " " + extra : ""));
    return c;
  }

  // --- connection state -----------------------------------------------------------------------
  var ws = null;
  var version = -1;
  var payload = null;          // {game_id, version, status, state}
  var lastSeq = 0;
  var skew = 0;                // server clock − local clock (ms)
  var offsets = [];            // recent (server_time − local receive time) samples
  var attempts = 0;
  var reconnectTimer = null;
  var pingTimer = null;
  var nextId = 1;
  var pending = {};            // id → action (for error messages)
  var presence = {};
  var closedForGood = false;

  // --- table-only state (never persisted) -----------------------------------------------------
  var peeks = {};              // "seat:place" → {card, until}  (private looks, shown briefly)
  var mode = null;             // null | {kind: "queen", place?: string}
  var lookSentRound = null;
  var logLines = [];
  var lastActionKey = "";
  var retry = null;            // {action, key}: a move refused as stale, to send again once
  var endedWinners = null;
  var names = {};
  boot.seats.forEach(function (s) { names[s.seat] = s.name; });

  function serverNow() { return Date.now() + skew; }
  function nameOf(seat) {
    if (seat === boot.you) return gettext("You");
    return names[seat] || fmt(gettext("Seat %(n)s"), { n: seat + 1 });
  }
  function state() { return payload && payload.state; }

  function setConn(kind, text) {
    if (!connEl) return;
    connEl.dataset.state = kind;
    connEl.textContent = text;
  }

  function connect() {
    if (closedForGood) return;
    var proto = location.protocol === "https:" ? "wss://" : "ws://";
    var url = proto + location.host + boot.ws + (version >= 0 ? "?version=" + version : "");
    setConn("connecting", attempts ? gettext("Reconnecting…") : gettext("Connecting…"));
    ws = new WebSocket(url);
    ws.onopen = function () {
      attempts = 0;
      setConn("online", gettext("Live"));
      ping();
      clearInterval(pingTimer);
      pingTimer = setInterval(ping, 15000);
    };
    ws.onmessage = function (e) {
      var frame;
      try { frame = JSON.parse(e.data); } catch (err) { return; }
      onFrame(frame);
    };
    ws.onclose = function (e) {
      clearInterval(pingTimer);
      ws = null;
      presence = {};  // unknown while we are not connected
      renderPresence();
      if (e.code === 4401 || e.code === 4403 || e.code === 4404) {
        closedForGood = true;
        if (!app && e.code !== 4401) { location.href = "/games/"; return; }  // e.g. kicked
        setConn("offline", e.code === 4401 ? gettext("Signed out — log in again.") : gettext("You cannot watch this game."));
        return;
      }
      attempts += 1;
      // docs/PROTOCOL.md: 0.2 s, doubling, capped at 5 s, with jitter.
      var delay = Math.min(5000, 200 * Math.pow(2, attempts - 1)) * (0.75 + Math.random() * 0.5);
      setConn("offline", fmt(gettext("Connection lost — retrying in %(s)s s"), { s: Math.ceil(delay / 1000) }));
      clearTimeout(reconnectTimer);
      reconnectTimer = setTimeout(connect, delay);
    };
  }

  function send(obj) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(obj));
      return true;
    }
    return false;
  }
  function ping() {
    var id = "p" + (nextId++);
    pending[id] = { ping: true };
    send({ type: "ping", id: id });
  }
  function resync() { send({ type: "resync", version: version >= 0 ? version : null }); }

  function randomKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  function turnKey(st) {
    return st && st.turn ? st.round + ":" + st.turn.no + ":" + st.turn.draw_no : st ? st.round + ":-" : "";
  }

  function retryStale() {
    var r = retry;
    retry = null;
    var st = state();
    if (!r || !st) return;
    var a = r.action;
    var still = a.type === "look" ? ((st.you && st.you.can) || []).indexOf("look") >= 0
      : a.type === "call" ? !!myWindow(st)
      : turnKey(st) === r.key && (a.type === "draw" ? canDraw(st) : holding(st));
    if (still) act(a, true);
    else toast(gettext("The table changed just before your move — please try again."));
  }

  function act(action, retried) {
    var id = nextId++;
    pending[id] = { action: action, retried: !!retried, key: turnKey(state()) };
    var ok = send({
      type: "act", id: id, action: action, version: version, idempotency_key: randomKey(),
    });
    if (!ok) toast(gettext("Not connected — the action was not sent."));
  }

  function onFrame(f) {
    if (typeof f.server_time === "number") {
      // docs/PROTOCOL.md: the largest offset over the last few frames is the one with the
      // least network delay.
      offsets.push(f.server_time - Date.now());
      if (offsets.length > 12) offsets.shift();
      skew = Math.max.apply(null, offsets);
    }
    switch (f.type) {
      case "snapshot":
        version = f.version;
        setPayload(f.state, []);
        break;
      case "update":
        if (f.version <= version) { if (retry) retryStale(); return; }
        if (version >= 0 && f.prev_version > version) { resync(); return; }
        version = f.version;
        setPayload(f.state, f.events || []);
        break;
      case "ack":
        delete pending[f.id];
        handleEvents(f.events || []);
        render();
        break;
      case "error":
        onError(f);
        break;
      case "presence":
        presence = f.seats || {};
        renderPresence();
        break;
      case "pong":
        delete pending[f.id];
        break;
    }
  }

  function onError(f) {
    var p = pending[f.id];
    delete pending[f.id];
    if (f.code === "stale_version") {
      // Something else happened first (a timer, another player's look). Catch up, and if the
      // move still means the same thing at the new version, send it once more.
      if (p && p.action && !p.retried) {
        retry = { action: p.action, key: p.key };
      } else {
        toast(gettext("The table changed just before your move — please try again."));
      }
      resync();
      return;
    }
    if (p && p.action && p.action.type === "look") return; // nothing to look at any more
    if (f.code === "rate_limited") { toast(gettext("Slow down a little.")); return; }
    var words = {
      not_your_turn: gettext("It is not your turn."),
      too_early: gettext("Not yet — wait for the countdown."),
      window_closed: gettext("Too late: your crisp window has closed."),
      no_window: gettext("You can call crisp only just after your own turn."),
      already_called: gettext("Someone has already called crisp this round."),
      final_turns: gettext("Nobody may call crisp during the final turns."),
      must_play_king: gettext("A King from the deck must be used."),
      must_swap: gettext("A card from the pile must be swapped in."),
      special_not_swappable: gettext("A Jack, Queen or King from the deck cannot be swapped in."),
      pile_empty: gettext("The discard pile is empty."),
      round_over: gettext("The round is over."),
      game_finished: gettext("The game is over."),
      game_over: gettext("The game is over."),
      not_seated: gettext("You have no seat at this game."),
    };
    toast(words[f.code] || f.detail || f.code);
  }

  function setPayload(newPayload, events) {
    var oldStatus = payload ? payload.status : boot.status;
    payload = newPayload;
    if (!app) {
      // The lobby page: anything that changes the seats or starts the game means a fresh page.
      if (events.length || (payload && payload.status !== oldStatus)) location.reload();
      return;
    }
    if (payload.status !== oldStatus && oldStatus === "lobby") { location.reload(); return; }
    handleEvents(events);
    var st = state();
    if (st && (payload.status === "finished" || payload.status === "abandoned") && st.status === "playing") {
      // Ended from outside the rules (an admin's "end now", or abandoned): no more moves.
      st.status = "finished";
      st.turn = null;
      st.held = null;
      st.windows = [];
      if (endedWinners) st.winners = endedWinners;
    }
    if (st && mode && !(st.turn && st.turn.seat === boot.you && st.held)) mode = null;
    render();
    if (retry) retryStale();
    maybeLook();
  }

  // --- the opening look, sent automatically at the deal (R3) --------------------------------
  function maybeLook() {
    var st = state();
    if (!st || boot.you === null || st.status !== "playing") return;
    var can = (st.you && st.you.can) || [];
    if (can.indexOf("look") >= 0 && lookSentRound !== st.round) {
      lookSentRound = st.round;
      act({ type: "look" });
    }
  }

  // --- events: the log in words, and the private looks -------------------------------------
  function peek(seat, place, card, ms) {
    peeks[seat + ":" + place] = { card: card, until: serverNow() + ms };
  }

  function handleEvents(events) {
    events.forEach(function (ev) {
      if (typeof ev.seq === "number") {
        if (ev.seq <= lastSeq) return;
        lastSeq = ev.seq;
      }
      var d = ev.data || {};
      var st = state();
      var memo = (st && st.settings && st.settings.memorise_ms) || 5000;
      if (ev.type === "look" && d.seat === boot.you && d.left) {
        // Show until the first turn may start, and never less than a few seconds.
        var until = st && st.turn && st.turn.phase === "start" && st.turn.no === 1
          ? st.turn.start_at - serverNow() : 0;
        var ms = Math.max(until, Math.min(memo, 4000));
        peek(boot.you, "left", d.left, ms);
        peek(boot.you, "right", d.right, ms);
      } else if (ev.type === "jack" && d.seat === boot.you && d.centre) {
        peek(boot.you, "centre", d.centre, 3000);
      } else if (ev.type === "queen") {
        if (d.seat === boot.you && d.received) peek(boot.you, d.place, d.received, 3000);
        if (d.target_seat === boot.you && d.given) peek(boot.you, d.target_place, d.given, 3000);
      }
      if (ev.type === "game_ended") endedWinners = d.winners || [];
      var line = describe(ev);
      if (line) addLog(line, ev.type);
    });
  }

  function describe(ev) {
    var d = ev.data || {};
    var who = d.seat !== undefined && d.seat !== null ? nameOf(d.seat) : "";
    switch (ev.type) {
      case "seat_joined": return fmt(gettext("%(name)s joined."), { name: d.name });
      case "seat_left": return fmt(gettext("%(name)s left."), { name: d.name });
      case "game_started": return gettext("The game starts.");
      case "round_dealt":
        return fmt(gettext("Round %(n)s: %(dealer)s deals. Memorise your left and right cards!"),
          { n: d.round, dealer: nameOf(d.dealer) });
      case "look":
        return d.seat === boot.you ? gettext("You looked at your left and right cards.")
          : fmt(gettext("%(name)s looked at their left and right cards."), { name: who });
      case "draw":
        if (d.source === "pile") {
          return fmt(gettext("%(name)s took %(card)s from the discard pile."), { name: who, card: cardText(d.card) });
        }
        // Never the value of one's own deck draw: swapped in, it is a hidden card again (R4/R5).
        return fmt(gettext("%(name)s drew from the deck."), { name: who });
      case "swap":
        return fmt(gettext("%(name)s swapped the %(place)s card; %(card)s discarded."),
          { name: who, place: PLACE_WORD[d.place], card: cardText(d.card_out) });
      case "discard": return fmt(gettext("%(name)s discarded %(card)s."), { name: who, card: cardText(d.card) });
      case "jack": return fmt(gettext("%(name)s played %(card)s and looked at the centre card."),
        { name: who, card: cardText(d.card) });
      case "queen":
        return fmt(gettext("%(name)s played %(card)s: swapped the %(place)s card with %(other)s's %(oplace)s card."),
          { name: who, card: cardText(d.card), place: PLACE_WORD[d.place],
            other: nameOf(d.target_seat), oplace: PLACE_WORD[d.target_place] });
      case "king": return fmt(gettext("%(name)s played %(card)s: two extra draws."), { name: who, card: cardText(d.card) });
      case "king_discarded": return fmt(gettext("%(card)s goes onto the discard pile."), { card: cardText(d.card) });
      case "timeout":
        return fmt(gettext("%(name)s ran out of time; %(card)s discarded."), { name: who, card: cardText(d.card) });
      case "call":
        return fmt(gettext("%(name)s called CRISP! Everyone else has one final turn."), { name: who });
      case "pile_turned": return gettext("The deck ran out: the discard pile was turned over.");
      case "reveal":
        return fmt(gettext("Round %(n)s is over: all cards face up."), { n: d.round });
      case "game_over":
        return fmt(gettext("Game over. Winner: %(names)s"), {
          names: (d.winners || []).map(nameOf).join(", "),
        });
      case "game_abandoned": return gettext("The game was abandoned.");
      case "game_ended": return gettext("An administrator ended the game.");
      default: return null;
    }
  }

  function addLog(text, kind) {
    logLines.push({ text: text, kind: kind });
    if (logLines.length > 200) logLines.shift();
    var list = document.getElementById("log");
    if (!list) return;
    var li = el("li", "log-" + kind, text);
    list.insertBefore(li, list.firstChild);
    while (list.children.length > 60) list.removeChild(list.lastChild);
  }

  var toastTimer = null;
  function toast(text) {
    var t = document.getElementById("toast");
    if (!t) { setConn("offline", text); return; }
    t.textContent = text;
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { t.hidden = true; }, 4000);
  }

  // --- what this player may do now, from the state and the (skew-corrected) clock ---------
  function myTurn(st) { return st.turn && st.turn.seat === boot.you && st.status === "playing" && !st.reveal; }
  function canDraw(st) {
    if (!myTurn(st)) return false;
    var t = st.turn;
    return t.phase === "draw" || (t.phase === "start" && serverNow() >= t.start_at);
  }
  function canPile(st) { return canDraw(st) && st.settings.pile_draw && st.pile.length > 0; }
  function holding(st) { return myTurn(st) && st.turn.phase === "play" && st.held && st.held.seat === boot.you; }
  function myWindow(st) {
    if (boot.you === null || st.caller !== null || st.reveal) return null;
    for (var i = 0; i < st.windows.length; i++) {
      var w = st.windows[i];
      if (w.seat === boot.you && serverNow() <= w.closes_at) return w;
    }
    return null;
  }

  // --- rendering --------------------------------------------------------------------------
  function secs(ms) { return Math.max(0, Math.ceil(ms / 1000)); }

  function seatPositions(n, you) {
    // Around an ellipse, you at the bottom centre, clockwise.
    var out = [];
    var base = you === null ? 0 : you;
    for (var i = 0; i < n; i++) {
      var k = (i - base + n) % n;
      var a = Math.PI / 2 + (2 * Math.PI * k) / n;
      out[i] = { x: 50 + 41 * Math.cos(a), y: 50 + 36 * Math.sin(a), k: k };
    }
    return out;
  }

  function render() {
    var st = state();
    if (!st || !app) return;
    var focusKey = document.activeElement && document.activeElement.dataset
      ? document.activeElement.dataset.key : null;
    renderSeats(st);
    renderCentre(st);
    renderActions(st);
    renderStatus(st);
    renderScores(st);
    renderReveal(st);
    renderPresence();
    if (focusKey) {
      var again = app.querySelector('[data-key="' + focusKey + '"]');
      if (again) again.focus();
    }
  }

  function renderSeats(st) {
    var box = document.getElementById("seats");
    box.textContent = "";
    document.getElementById("felt").classList.toggle("many", st.seats > 4);
    var pos = seatPositions(st.seats, boot.you);
    var revealed = !!st.reveal;
    var pickOwn = mode && mode.kind === "queen" && !mode.place;
    var pickOther = mode && mode.kind === "queen" && mode.place;
    var swapping = holding(st) && !mode && st.held.card && (st.held.source === "pile" || "JQK".indexOf(st.held.card[0]) < 0);
    for (var s = 0; s < st.seats; s++) {
      var mine = s === boot.you;
      var seat = el("section", "seat" + (mine ? " mine" : "") +
        (st.turn && st.turn.seat === s && !revealed ? " active" : "") +
        (st.caller === s ? " caller" : ""));
      seat.style.setProperty("--x", pos[s].x + "%");
      seat.style.setProperty("--y", pos[s].y + "%");
      seat.style.order = mine ? 99 : pos[s].k;
      seat.setAttribute("aria-label", mine ? gettext("Your seat") : fmt(gettext("%(name)s's seat"), { name: names[s] || "" }));
      var head = el("div", "seat-head");
      var dot = el("span", "presence");
      dot.dataset.presenceSeat = s;
      head.appendChild(dot);
      head.appendChild(el("span", "seat-name", mine ? fmt(gettext("%(name)s (you)"), { name: names[s] }) : names[s]));
      if (st.dealer === s) {
        var dm = el("span", "dealer-chip", "D");
        dm.title = gettext("Dealer");
        dm.setAttribute("aria-label", gettext("Dealer"));
        head.appendChild(dm);
      }
      if (st.caller === s) head.appendChild(el("span", "crisp-chip", gettext("CRISP")));
      head.appendChild(el("span", "seat-score", String(st.scores[s])));
      seat.appendChild(head);
      var row = el("div", "hand");
      for (var i = 0; i < 3; i++) {
        var place = PLACES[i];
        var card = st.hands[s][i];
        var pk = peeks[s + ":" + place];
        if (pk && pk.until <= serverNow()) { delete peeks[s + ":" + place]; pk = null; }
        var slot;
        var clickable = (mine && (swapping || pickOwn)) || (!mine && pickOther);
        if (clickable) {
          slot = el("button", "slot pickable");
          slot.type = "button";
          slot.dataset.key = "slot-" + s + "-" + place;
          var label;
          if (swapping) label = fmt(gettext("Swap into your %(place)s place"), { place: PLACE_WORD[place] });
          else if (pickOwn) label = fmt(gettext("Give your %(place)s card"), { place: PLACE_WORD[place] });
          else label = fmt(gettext("Take %(name)s's %(place)s card"), { name: names[s], place: PLACE_WORD[place] });
          slot.setAttribute("aria-label", label);
          slot.title = label;
          slot.addEventListener("click", onSlot.bind(null, s, place));
        } else {
          slot = el("div", "slot");
          slot.setAttribute("aria-label", PLACE_WORD[place]);
        }
        if (mode && mode.place === place && mine) slot.classList.add("chosen");
        if (card) slot.appendChild(cardFace(card));
        else if (pk) { slot.appendChild(cardFace(pk.card, "peek")); slot.classList.add("peeking"); }
        else slot.appendChild(cardBack());
        slot.appendChild(el("span", "place-label", PLACE_WORD[place]));
        row.appendChild(slot);
      }
      seat.appendChild(row);
      if (mine) {
        var peekUntil = 0;
        Object.keys(peeks).forEach(function (k) { peekUntil = Math.max(peekUntil, peeks[k].until); });
        if (peekUntil > serverNow()) {
          var pt = el("div", "peek-timer", gettext("Memorise!"));
          var pc = el("span", "countdown");
          pc.dataset.until = Math.round(peekUntil);
          pt.appendChild(pc);
          seat.appendChild(pt);
        }
      }
      if (revealed) {
        var total = st.reveal.totals[s];
        var rs = st.reveal.round_scores[s];
        var sum = el("div", "seat-result");
        sum.textContent = fmt(gettext("%(total)s points"), { total: total });
        if (st.caller === s) {
          sum.appendChild(el("span", "bonus " + (rs < total ? "good" : "bad"),
            rs < total ? " −5" : " +5"));
        }
        seat.appendChild(sum);
      }
      if (st.turn && st.turn.seat === s && !revealed && st.held && st.held.seat === s && !mine) {
        var h = el("div", "their-held");
        h.appendChild(st.held.card ? cardFace(st.held.card, "small") : cardBack("small"));
        h.appendChild(el("span", "muted", gettext("drawn")));
        seat.appendChild(h);
      }
      box.appendChild(seat);
    }
  }

  function renderCentre(st) {
    document.getElementById("deck-count").textContent = String(st.deck_size);
    var deck = document.getElementById("deck");
    var drawOk = canDraw(st) && !st.reveal;
    deck.disabled = !drawOk;
    deck.classList.toggle("ready", drawOk);
    deck.setAttribute("aria-label", fmt(gettext("Deck, %(n)s cards"), { n: st.deck_size }) +
      (drawOk ? " — " + gettext("draw") : ""));
    var pile = document.getElementById("pile");
    pile.textContent = "";
    if (st.pile.length) {
      if (st.pile.length > 1) pile.appendChild(cardFace(st.pile[st.pile.length - 2], "under"));
      pile.appendChild(cardFace(st.pile[st.pile.length - 1], "top"));
    } else {
      pile.appendChild(el("span", "pcard empty", gettext("empty")));
    }
    var pileOk = canPile(st) && !st.reveal;
    pile.classList.toggle("ready", pileOk);
    pile.setAttribute("aria-label", pileOk ? gettext("Take the top card of the discard pile")
      : fmt(gettext("Discard pile, %(n)s cards — view all"), { n: st.pile.length }));
    var wrap = document.getElementById("held-wrap");
    var held = document.getElementById("held");
    held.textContent = "";
    var kings = (st.turn && st.turn.kings_in_play) || [];
    if (st.held && !st.reveal) {
      wrap.hidden = false;
      held.appendChild(st.held.card ? cardFace(st.held.card, "lift") : cardBack("lift"));
      document.getElementById("held-label").textContent = st.held.seat === boot.you
        ? gettext("Your drawn card") : fmt(gettext("%(name)s's drawn card"), { name: names[st.held.seat] });
    } else if (kings.length && !st.reveal) {
      wrap.hidden = false;
      kings.forEach(function (k) { held.appendChild(cardFace(k, "small")); });
      document.getElementById("held-label").textContent = gettext("King in play");
    } else {
      wrap.hidden = true;
    }
  }

  function button(label, cls, key, onClick, extra) {
    var b = el("button", "button " + (cls || ""), label);
    b.type = "button";
    b.dataset.key = key;
    if (extra) b.setAttribute("aria-label", extra);
    b.addEventListener("click", onClick);
    return b;
  }

  function actionKey(st) {
    return [version, canDraw(st), canPile(st), !!myWindow(st), mode ? mode.kind + (mode.place || "") : ""].join("|");
  }

  function renderActions(st) {
    var box = document.getElementById("actions");
    lastActionKey = actionKey(st);
    box.textContent = "";
    if (boot.you === null) {
      box.appendChild(el("p", "muted", gettext("You are watching this game.")));
      return;
    }
    var w = myWindow(st);
    if (w) {
      var call = button(gettext("Call CRISP!"), "crisp-button", "call", function () { act({ type: "call" }); });
      call.appendChild(el("span", "countdown", "", null));
      call.querySelector(".countdown").dataset.until = w.closes_at;
      box.appendChild(call);
    }
    if (st.status !== "playing" || st.reveal) return;
    if (canDraw(st)) {
      box.appendChild(button(gettext("Draw from the deck"), "", "draw-deck", function () {
        act({ type: "draw", source: "deck" });
      }));
      if (canPile(st)) {
        box.appendChild(button(fmt(gettext("Take %(card)s from the pile"), { card: cardText(st.pile[st.pile.length - 1]) }),
          "secondary", "draw-pile", function () { act({ type: "draw", source: "pile" }); }));
      }
    } else if (holding(st)) {
      var card = st.held.card;
      var special = st.held.source === "deck" && "JQK".indexOf(card[0]) >= 0;
      if (mode && mode.kind === "queen") {
        box.appendChild(el("p", "hint", mode.place
          ? fmt(gettext("Now pick an opponent's card to swap with your %(place)s card."), { place: PLACE_WORD[mode.place] })
          : gettext("Pick one of your cards to give away.")));
        box.appendChild(button(gettext("Cancel"), "secondary", "cancel", function () { mode = null; render(); }));
        return;
      }
      if (st.held.source === "pile") {
        box.appendChild(el("p", "hint", gettext("A card from the pile must be swapped in: click one of your cards.")));
      } else if (!special) {
        box.appendChild(el("p", "hint", gettext("Click one of your cards to swap it, or discard.")));
      }
      if (card[0] === "K" && special) {
        box.appendChild(button(gettext("Use the King: two extra draws"), "", "king", function () { act({ type: "king" }); }));
      } else {
        if (card[0] === "J" && special) {
          box.appendChild(button(gettext("Use the Jack: look at your centre card"), "", "jack", function () { act({ type: "jack" }); }));
        }
        if (card[0] === "Q" && special) {
          box.appendChild(button(gettext("Use the Queen: swap blind with an opponent"), "", "queen", function () {
            mode = { kind: "queen" }; render();
          }));
        }
        if (st.held.source !== "pile") {
          box.appendChild(button(fmt(gettext("Discard %(card)s"), { card: cardText(card) }), "secondary", "discard",
            function () { act({ type: "discard" }); }));
        }
      }
    } else if (myTurn(st) && st.turn.phase === "start") {
      box.appendChild(el("p", "hint", gettext("Get ready — your turn starts in a moment.")));
    }
  }

  function onSlot(seat, place) {
    var st = state();
    if (!st) return;
    if (mode && mode.kind === "queen") {
      if (!mode.place) { mode.place = place; render(); return; }
      var action = { type: "queen", place: mode.place, target_seat: seat, target_place: place };
      mode = null;
      act(action);
      render();
      return;
    }
    act({ type: "swap", place: place });
  }

  var baseTitle = document.title;
  function renderStatus(st) {
    var yourMove = st.status === "playing" && !st.reveal && (myTurn(st) || !!myWindow(st));
    document.title = (yourMove ? "● " + gettext("Your turn") + " · " : "") + baseTitle;
    var chip = document.querySelector(".status-chip");
    if (chip && st.status === "finished" && !chip.classList.contains("status-finished")) {
      chip.className = "chip status-chip status-finished";
      chip.textContent = gettext("Finished");
    }
    var bar = document.getElementById("status-bar");
    bar.textContent = "";
    var text = "";
    var until = null;
    var t = st.turn;
    if (st.status === "finished") {
      text = gettext("Game over.");
    } else if (st.reveal) {
      text = fmt(gettext("Round %(n)s is over."), { n: st.round });
      if (st.next_round_at) { until = st.next_round_at; text += " " + gettext("Next round in"); }
    } else if (t) {
      var who = t.seat === boot.you ? gettext("Your turn") : fmt(gettext("%(name)s's turn"), { name: names[t.seat] });
      text = fmt(gettext("Round %(n)s · %(who)s"), { n: st.round, who: who });
      if (t.final) text += " · " + gettext("final turn");
      if (t.draw_no > 1) text += " · " + gettext("King's extra draw");
      if (t.extra_draws_left) text += " · " + fmt(ngettext("%(n)s extra draw left", "%(n)s extra draws left", t.extra_draws_left), { n: t.extra_draws_left });
      if (t.phase === "start" && t.start_at > serverNow()) {
        until = t.start_at;
        text += " · " + (t.no === 1 && t.draw_no <= 1 ? gettext("memorise! play starts in") : gettext("may start in"));
      } else if (t.draw_deadline) {
        until = t.draw_deadline;
        text += " · " + gettext("time left");
      }
    }
    bar.appendChild(el("span", "status-text", text));
    if (until) {
      var c = el("span", "countdown big");
      c.dataset.until = until;
      bar.appendChild(c);
    }
    if (st.caller !== null && !st.reveal) {
      bar.appendChild(el("span", "called", fmt(gettext("%(name)s called crisp — final turns: %(n)s left"),
        { name: nameOf(st.caller), n: st.final_turns_left })));
    }
    tick();
  }

  function renderScores(st) {
    var box = document.getElementById("scoreboard");
    box.textContent = "";
    var table = el("table", "scores");
    var thead = el("thead");
    var hr = el("tr");
    hr.appendChild(el("th", "", gettext("Player")));
    st.history.forEach(function (_, i) { hr.appendChild(el("th", "num", fmt(gettext("R%(n)s"), { n: i + 1 }))); });
    hr.appendChild(el("th", "num", gettext("Total")));
    thead.appendChild(hr);
    table.appendChild(thead);
    var tb = el("tbody");
    for (var s = 0; s < st.seats; s++) {
      var tr = el("tr", st.winners.indexOf(s) >= 0 ? "winner" : "");
      tr.appendChild(el("td", "", names[s] + (s === boot.you ? " ★" : "")));
      st.history.forEach(function (h) { tr.appendChild(el("td", "num", String(h[s]))); });
      tr.appendChild(el("td", "num total", String(st.scores[s])));
      tb.appendChild(tr);
    }
    table.appendChild(tb);
    box.appendChild(table);
    box.appendChild(el("p", "muted small", fmt(gettext("The game ends at %(n)s points; lowest total wins."), { n: st.settings.target_score })));
  }

  var revealShownFor = null;
  function renderReveal(st) {
    var ov = document.getElementById("reveal");
    if (!st.reveal && st.status !== "finished") { ov.hidden = true; revealShownFor = null; return; }
    var rv = st.reveal;
    var key = st.round + ":" + st.status;
    if (revealShownFor === key && ov.dataset.dismissed === "1") return;
    if (revealShownFor !== key) ov.dataset.dismissed = "0";
    revealShownFor = key;
    ov.hidden = false;
    ov.textContent = "";
    var panel = el("div", "reveal-panel card");
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-labelledby", "reveal-title");
    var over = st.status === "finished";
    var title = el("h2", "", over ? gettext("Game over") : fmt(gettext("Round %(n)s results"), { n: st.round }));
    title.id = "reveal-title";
    panel.appendChild(title);
    if (over) {
      var w = st.winners.map(function (s) { return names[s]; }).join(", ");
      panel.appendChild(el("p", "winners", st.winners.indexOf(boot.you) >= 0
        ? "★ " + gettext("You win!") + " ★" : fmt(ngettext("Winner: %(names)s", "Winners: %(names)s", st.winners.length), { names: w })));
    }
    var caller = rv ? st.caller : null;
    if (caller !== null) {
      panel.appendChild(el("p", "muted", rv.caller_strictly_lowest
        ? fmt(gettext("%(name)s called crisp with the strictly lowest total: −5."), { name: nameOf(caller) })
        : fmt(gettext("%(name)s called crisp without the strictly lowest total: +5."), { name: nameOf(caller) })));
    }
    var table = el("table", "scores reveal-table");
    var hr = el("tr");
    (rv ? [gettext("Player"), gettext("Cards"), gettext("Sum"), gettext("Round"), gettext("Total")] : [gettext("Player"), "", "", "", gettext("Total")]).forEach(function (h, i) {
      hr.appendChild(el("th", i >= 2 ? "num" : "", h));
    });
    var thead = el("thead"); thead.appendChild(hr); table.appendChild(thead);
    var tb = el("tbody");
    for (var s = 0; s < st.seats; s++) {
      var tr = el("tr", st.winners.indexOf(s) >= 0 ? "winner" : "");
      tr.appendChild(el("td", "", names[s] + (s === caller ? " · " + gettext("CRISP") : "")));
      var cards = el("td", "mini-hand");
      st.hands[s].forEach(function (c) { if (c) cards.appendChild(cardFace(c, "mini")); });
      tr.appendChild(cards);
      tr.appendChild(el("td", "num", rv ? String(rv.totals[s]) : ""));
      tr.appendChild(el("td", "num", rv ? String(rv.round_scores[s]) : ""));
      tr.appendChild(el("td", "num total", String(st.scores[s])));
      tb.appendChild(tr);
    }
    table.appendChild(tb);
    panel.appendChild(table);
    if (!over && st.next_round_at) {
      var p = el("p", "muted", gettext("Next round in") + " ");
      var c = el("span", "countdown"); c.dataset.until = st.next_round_at;
      p.appendChild(c);
      panel.appendChild(p);
    }
    var row = el("div", "reveal-actions");
    row.appendChild(button(gettext("Show the table"), "secondary", "reveal-close", function () {
      ov.dataset.dismissed = "1"; ov.hidden = true;
    }));
    if (over) {
      var back = el("a", "button", gettext("Back to games"));
      back.href = "/games/";
      row.appendChild(back);
    }
    panel.appendChild(row);
    ov.appendChild(panel);
  }

  function renderPresence() {
    document.querySelectorAll("[data-presence-seat]").forEach(function (dot) {
      var on = (presence[dot.dataset.presenceSeat] || 0) > 0;
      dot.classList.toggle("online", on);
      dot.title = on ? gettext("online") : gettext("offline");
      dot.setAttribute("aria-label", dot.title);
    });
  }

  // --- the clock: countdowns and time-dependent buttons -------------------------------------
  function tick() {
    var now = serverNow();
    document.querySelectorAll("[data-until]").forEach(function (c) {
      var left = parseInt(c.dataset.until, 10) - now;
      c.textContent = " " + secs(left) + gettext("s");
      c.classList.toggle("urgent", left < 5000);
    });
    var st = state();
    if (!st || !app) return;
    var expired = false;
    Object.keys(peeks).forEach(function (k) { if (peeks[k].until <= now) expired = true; });
    if (expired) { render(); return; }
    if (actionKey(st) !== lastActionKey) { render(); }
  }
  setInterval(tick, 200);

  // --- static controls ------------------------------------------------------------------------
  if (app) {
    document.getElementById("deck").addEventListener("click", function () {
      var st = state();
      if (st && canDraw(st)) act({ type: "draw", source: "deck" });
    });
    var dialog = document.getElementById("pile-dialog");
    var openPile = function () {
      var st = state();
      var all = document.getElementById("pile-all");
      all.textContent = "";
      if (!st || !st.pile.length) all.appendChild(el("p", "muted", gettext("The discard pile is empty.")));
      else st.pile.forEach(function (c) { all.appendChild(cardFace(c, "small")); });
      if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
    };
    document.getElementById("pile").addEventListener("click", function () {
      var st = state();
      if (st && canPile(st)) act({ type: "draw", source: "pile" });
      else openPile();
    });
    document.getElementById("view-pile").addEventListener("click", openPile);
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && mode) { mode = null; render(); }
    });
  }

  window.addEventListener("online", function () { if (!ws) { attempts = 0; connect(); } });
  connect();
})();
