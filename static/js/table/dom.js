/* Tiny DOM helpers shared by every table module (no framework). */

/** A new element with a class list and text content (both optional). */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

/** A <button type=button> with a stable `data-key` (tests and focus restoring use it). */
export function button(label, cls, key, onClick, ariaLabel) {
  const b = el("button", "button " + (cls || ""), label);
  b.type = "button";
  b.dataset.key = key;
  if (ariaLabel) b.setAttribute("aria-label", ariaLabel);
  b.addEventListener("click", onClick);
  return b;
}

/** Read the page's boot data: the JSON the server rendered with `json_script`. */
export function bootData(id) {
  const node = document.getElementById(id || "table-boot");
  return node ? JSON.parse(node.textContent) : null;
}
