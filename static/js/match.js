/* Crisp online — quick match: the lobby's "Find me a game" buttons (issue 24).
 *
 * A button asks the API (POST /api/v1/match/) for a game of its kind (and seat count); while
 * the player waits, the page polls the status (GET, every 2 s: polling, not the socket, because
 * a waiting player has no game to listen to yet) until it says "matched", then opens the table.
 * The status request is also what seats a player with computers once the wait is over, so the
 * poll is the whole mechanism. A page opened while its player waits picks the wait up again.
 */
(function () {
  "use strict";
  var box = document.getElementById("quick-match");
  if (!box || !window.fetch) return;
  var url = box.getAttribute("data-match-url");
  var waiting = document.getElementById("match-waiting");
  var text = box.querySelector("[data-match-text]");
  var clock = box.querySelector("[data-match-clock]");
  var fill = document.getElementById("match-fill");
  var error = box.querySelector("[data-match-error]");
  var forms = box.querySelectorAll("[data-match-form]");
  var csrf = box.querySelector("input[name=csrfmiddlewaretoken]");
  var timer = null;
  var asked = null; // the last request: {kind, seats}

  function call(method, body) {
    var headers = { "Accept": "application/json", "X-CSRFToken": csrf ? csrf.value : "" };
    if (body) headers["Content-Type"] = "application/json";
    return fetch(url, {
      method: method, credentials: "same-origin", headers: headers,
      body: body ? JSON.stringify(body) : undefined
    }).then(function (r) {
      if (r.status === 204) return null;
      return r.json().then(function (data) { if (!r.ok) throw data; return data; });
    });
  }

  function showWaiting(on) {
    waiting.hidden = !on;
    forms.forEach(function (f) { f.querySelector("button").disabled = on; });
    if (!on && timer) { clearInterval(timer); timer = null; }
  }

  function seen(status) {
    if (!status) return;
    // "matched" opens the table only for a wait this page saw: a player at a quick-match
    // table who opens the lobby again is not sent back to it.
    if (status.state === "matched" && status.game_id && (timer || asked)) {
      showWaiting(false);
      location.href = box.getAttribute("data-table-url").replace(/0\/?$/, status.game_id + "/");
      return;
    }
    box.setAttribute("data-match-state", status.state); // what the page last heard
    if (status.state !== "waiting") { showWaiting(false); return; }
    asked = { kind: status.kind, seats: status.seats };
    fill.checked = status.fill_with_computers;
    text.textContent = box.getAttribute("data-text-waiting");
    var s = Math.floor(status.waited_ms / 1000);
    clock.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    showWaiting(true);
    if (!timer) timer = setInterval(poll, 2000);
  }

  function failed(err) {
    showWaiting(false);
    error.textContent = err && err.detail ? err.detail : box.getAttribute("data-text-failed");
    error.hidden = false;
  }

  function poll() { call("GET").then(seen).catch(function () { /* offline: next time */ }); }

  forms.forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      error.hidden = true;
      var body = { kind: form.getAttribute("data-kind"), fill_with_computers: fill.checked };
      var seats = form.querySelector("select[name=seats]");
      if (seats) body.seats = parseInt(seats.value, 10);
      asked = { kind: body.kind, seats: body.seats };
      call("POST", body).then(seen).catch(failed);
    });
  });
  fill.addEventListener("change", function () {
    if (!timer || !asked) return; // the choice goes with the next request
    call("POST", { kind: asked.kind, seats: asked.seats, fill_with_computers: fill.checked })
      .then(seen).catch(failed);
  });
  box.querySelector("[data-match-cancel]").addEventListener("click", function () {
    call("DELETE").then(function () { asked = null; showWaiting(false); }).catch(poll);
  });
  poll(); // waiting already (a reload, another tab)?
})();
