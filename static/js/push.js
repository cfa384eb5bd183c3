/* The notification settings page's push switch for this browser: subscribes through the
   service worker with the site's VAPID key and saves the subscription (POST), or unsubscribes
   and forgets it (DELETE), at /api/v1/me/push-subscriptions/. */
"use strict";
(function () {
  const card = document.getElementById("push-card");
  if (!card) return;
  const on = document.getElementById("push-on");
  const off = document.getElementById("push-off");
  const state = document.getElementById("push-state");
  const api = card.dataset.api;
  const gettext = window.gettext || ((s) => s);

  function csrf() {
    const m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  function keyBytes(b64) {
    const pad = "=".repeat((4 - (b64.length % 4)) % 4);
    const raw = atob((b64 + pad).replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }
  function send(method, body) {
    return fetch(api, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(body),
    }).then((r) => {
      if (!r.ok) throw new Error(String(r.status));
    });
  }
  function show(subscribed) {
    on.hidden = subscribed;
    off.hidden = !subscribed;
  }

  if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
    state.textContent = gettext("This browser cannot receive push notifications.");
    return;
  }
  navigator.serviceWorker.register("/sw.js", { scope: "/" });
  navigator.serviceWorker.ready.then((reg) => {
    reg.pushManager.getSubscription().then((sub) => show(!!sub));
    on.addEventListener("click", () => {
      on.disabled = true;
      reg.pushManager
        .subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(card.dataset.vapidKey) })
        .then((sub) => send("POST", sub.toJSON()))
        .then(() => {
          state.textContent = gettext("This browser gets push notifications.");
          show(true);
        })
        .catch(() => {
          state.textContent = gettext("Push notifications could not be switched on here.");
        })
        .finally(() => {
          on.disabled = false;
        });
    });
    off.addEventListener("click", () => {
      off.disabled = true;
      reg.pushManager
        .getSubscription()
        .then((sub) => (sub ? send("DELETE", { endpoint: sub.endpoint }).then(() => sub.unsubscribe()) : null))
        .then(() => {
          state.textContent = gettext("This browser gets no push notifications.");
          show(false);
        })
        .finally(() => {
          off.disabled = false;
        });
    });
  });
})();
