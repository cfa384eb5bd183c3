/* Short sounds (Web Audio, synthesised: no files to load) and a mute switch that sticks.
 *
 * The mute choice is the only thing the table keeps in localStorage (key `table.sound`, value
 * "off" when muted; removed when sound is on). Browsers start audio only after a gesture, so
 * the context is created on the player's first click or key press.
 */
import { gettext } from "./i18n.js";

const KEY = "table.sound";
let ctx = null;
let mutedHere = false;  // the choice, where localStorage cannot keep it (private mode)

/** Read each time: the switch may have been turned in another tab (yourmove.js plays the
 *  chime on every page, the switch is on the table's). */
function storedMuted() {
  try { return window.localStorage.getItem(KEY) === "off"; } catch (e) { return mutedHere; }
}

function unlock() {
  if (ctx || !(window.AudioContext || window.webkitAudioContext)) return;
  try { ctx = new (window.AudioContext || window.webkitAudioContext)(); } catch (e) { ctx = null; }
}
["pointerdown", "keydown"].forEach(function (t) {
  window.addEventListener(t, unlock, { once: true, capture: true });
});

/** The notes of each cue: [frequency Hz, start s, length s]. */
const CUES = {
  turn: [[660, 0, 0.12], [880, 0.13, 0.16]],   // your turn: a rising two-note chime
  window: [[988, 0, 0.08], [988, 0.11, 0.08], [1319, 0.22, 0.14]],  // your crisp window
  alert: [[440, 0, 0.18]],
};

/** Play a cue by name ("turn", "window", "alert"), unless muted or audio is unavailable. */
export function play(name) {
  if (CUES[name]) notes(CUES[name]);
}

/** The "turn" cue: a move of yours is waiting (the table's, and yourmove.js's on every page). */
export function turnChime() {
  notes(CUES.turn);
}

function notes(list) {
  if (!ctx || storedMuted()) return;
  if (ctx.state === "suspended") ctx.resume();
  const t0 = ctx.currentTime + 0.01;
  list.forEach(function (n) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = "sine";
    osc.frequency.value = n[0];
    gain.gain.setValueAtTime(0.0001, t0 + n[1]);
    gain.gain.exponentialRampToValueAtTime(0.18, t0 + n[1] + 0.015);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + n[1] + n[2]);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t0 + n[1]);
    osc.stop(t0 + n[1] + n[2] + 0.02);
  });
}

/** Whether sounds are off (the player's stored choice). */
export function isMuted() { return storedMuted(); }

/** Turn sounds off (true) or on (false), and remember it. */
export function setMuted(value) {
  mutedHere = !!value;
  try {
    if (mutedHere) window.localStorage.setItem(KEY, "off");
    else window.localStorage.removeItem(KEY);
  } catch (e) { /* private mode: the choice lasts for this page only */ }
}

/** Make `btn` the page's sound switch (aria-pressed = muted). */
export function mountSoundToggle(btn) {
  if (!btn) return;
  const paint = function () {
    const muted = storedMuted();
    btn.setAttribute("aria-pressed", muted ? "true" : "false");
    btn.dataset.muted = muted ? "1" : "0";
    btn.textContent = "♪";  // a note (in every system font); CSS strikes it through when muted
    const label = muted ? gettext("Sound off — turn on") : gettext("Sound on — mute");
    btn.setAttribute("aria-label", label);
    btn.title = label;
  };
  btn.addEventListener("click", function () {
    unlock();
    setMuted(!storedMuted());
    paint();
    play("alert");
  });
  btn.hidden = false;
  paint();
}
