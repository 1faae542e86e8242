// @ts-check
// Short messages in the corner: what happened, and sometimes a button to act on it.

import { el, button } from "./dom.js";
import { fixAction } from "./fix_actions.js";

const area = document.getElementById("toasts");
// More than this many at once hide the window: the oldest make way.
const MOST_SHOWN = 3;

export function toast(message, { kind = "info", action = null, timeout = 6000 } = {}) {
  const item = el("div", { class: `toast ${kind}`, attrs: { role: kind === "error" ? "alert" : "status" } }, [
    el("span", { text: message }),
  ]);
  if (action) {
    item.append(button(action.label, () => {
      action.run();
      item.remove();
    }, "button small"));
  }
  item.append(button("×", () => item.remove(), "toast-close", "Dismiss this message"));
  area.append(item);
  while (area.children.length > MOST_SHOWN) area.firstElementChild.remove();
  // A message with something to do stays until it is done or dismissed: a person who
  // reads slowly, or listens to a screen reader, must not lose the button.
  if (timeout && !action) setTimeout(() => item.remove(), timeout);
  return item;
}

// What the window offers for an error with no fix of its own, by its code (set by
// main.js): a button to act.
let errorActions = {};

export function setErrorActions(actions) {
  errorActions = actions;
}

/** @param {import("./contract.js").CodedError} error */
export function errorToast(error) {
  const action = fixAction(error?.fix) ?? errorActions[error?.code] ?? null;
  return toast(error.message ?? String(error), { kind: "error", timeout: 10000, action });
}
