/* Registers the site's service worker (/sw.js, scope /): static files cached, pushes shown. */
"use strict";
if ("serviceWorker" in navigator) {
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {});
  });
}
