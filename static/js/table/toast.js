/* A short message at the bottom of the screen (role=alert), one at a time. */

let timer = null;

/** Show `text` for `ms` (default 4 s); a new toast replaces the one showing. */
export function toast(text, ms) {
  let t = document.getElementById("toast");
  if (!t) {
    t = document.createElement("div");
    t.id = "toast";
    t.className = "toast";
    t.setAttribute("role", "alert");
    document.body.appendChild(t);
  }
  t.textContent = text;
  t.hidden = false;
  clearTimeout(timer);
  timer = setTimeout(function () { t.hidden = true; }, ms || 4000);
}
