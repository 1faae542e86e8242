// @ts-check
// Two texts compared line by line, as the Rust side listed the lines: the same ones in
// grey, added ones in green, removed ones struck through in red.

import { el } from "./dom.js";

export function diffView(lines, sameText = "Same as the AI's original.") {
  if (!lines.length) return el("p", { class: "muted", text: "Nothing to compare yet." });
  if (lines.every((line) => line.change === "same")) return el("p", { class: "muted", text: sameText });
  return el("pre", { class: "diff" }, lines.map((line) =>
    el("span", {
      class: `diff-${line.change}`,
      text: `${line.change === "added" ? "+ " : line.change === "removed" ? "- " : "  "}${line.text}\n`,
    })));
}
