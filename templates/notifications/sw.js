/* Crisp online's service worker (served at /sw.js by notifications.views.service_worker).

   Two jobs. (1) Caching: STATIC files only -- same-origin GET requests under the static prefix
   -- so the installed app opens fast; everything else (pages, /api/, a game's page, its
   WebSocket) goes to the network untouched: a game's state is never cached. (2) Web Push: a
   "your move" push shows a notification; a click on it opens (or focuses) the game's page. */
"use strict";

const STATIC_PREFIX = "{{ static_prefix|escapejs }}";
// Named after the deployed static files (their manifest's hash): a deploy changes this script,
// the browser installs the new worker, and its activation drops the old files' cache.
const CACHE = "{{ cache_name|escapejs }}";

self.addEventListener("install", () => self.skipWaiting());

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

/* Whether a request may be answered from the cache: only our own static files. */
function cacheable(request) {
  if (request.method !== "GET" || request.headers.has("range")) return false;
  const url = new URL(request.url);
  return url.origin === self.location.origin && url.pathname.startsWith(STATIC_PREFIX);
}

self.addEventListener("fetch", (event) => {
  if (!cacheable(event.request)) return; // the network, as if there were no worker
  event.respondWith(
    caches.open(CACHE).then((cache) =>
      fetch(event.request)
        .then((response) => {
          if (response.status === 200) cache.put(event.request, response.clone()).catch(() => {});
          return response;
        })
        .catch(() => cache.match(event.request).then((hit) => hit || Response.error())),
    ),
  );
});

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (e) {
    data = {};
  }
  const url = typeof data.url === "string" && data.url.startsWith("/") ? data.url : "/";
  event.waitUntil(
    self.registration.showNotification(data.title || "Crisp online", {
      body: data.body || "",
      icon: STATIC_PREFIX + "icons/icon-192.png",
      tag: url,
      data: { url: url },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      for (const w of windows) {
        if (w.url === url && "focus" in w) return w.focus();
      }
      return self.clients.openWindow(url);
    }),
  );
});
