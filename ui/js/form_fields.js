// @ts-check
// The labelled fields the settings' forms are made of: a text or number input, a
// select, each with its label and an optional hint beside it.

import { el } from "./dom.js";

/**
 * A label holding `input`, with `hint` after the label's text.
 * @param {string} label @param {HTMLElement} input @param {string} [hint]
 */
export function field(label, input, hint) {
  return el("label", {}, [label, hint ? el("span", { class: "hint", text: ` ${hint}` }) : null, input]);
}

/**
 * A text input named `name` (or another type through `attrs`) holding `value`.
 * @param {string} name @param {string | number | null | undefined} value
 * @param {Record<string, string>} [attrs]
 */
export function input(name, value, attrs = {}) {
  const element = el("input", { attrs: { name, type: "text", spellcheck: "false", ...attrs } });
  element.value = String(value ?? "");
  return element;
}

/**
 * A select named `name` of `options` (value, label pairs), `chosen` selected.
 * @param {string} name @param {[string, string][]} options @param {string} chosen
 */
export function select(name, options, chosen) {
  const element = el("select", { attrs: { name } });
  for (const [value, label] of options) element.append(new Option(label, value, false, value === chosen));
  return element;
}
