// @ts-check
// Before the owner lets someone else's words reach the agent (a visitor's item or
// follow-up, an edit someone else made, a lesson the agent proposed): the text exactly as
// the agent gets it, with what the rendered view hides (comments, link definitions,
// folded details, invisible characters) marked. The HTML is the Rust side's, escaped
// there.

import { el, trustedHtml } from "./dom.js";

/**
 * @param {import("./contract.js").RevealedText} raw
 * @param {boolean} [open]
 */
export function agentGets(raw, open = false) {
  const hidden = raw.hiddenParts.length;
  const summary = el("summary", {}, [
    el("span", { text: "What the agent gets" }),
    hidden
      ? el("span", { class: "badge warning hidden-count", text: `${hidden} hidden part${hidden === 1 ? "" : "s"}: ${[...new Set(raw.hiddenParts)].join(", ")}` })
      : el("span", { class: "badge", text: "nothing hidden" }),
  ]);
  const block = el("details", { class: "agent-gets", dataset: { hidden: String(hidden) } }, [
    summary,
    trustedHtml(el("pre", { class: "raw-text" }), raw.html),
  ]);
  block.open = open || hidden > 0;
  return block;
}
