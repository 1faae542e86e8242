// @ts-check
// A comment's history: every version on a timeline (the agent's, yours, edits made on
// GitHub, by whom and when), any two of them picked and compared side by side.

import { backend } from "./backend.js";
import { el, button, trustedHtml } from "./dom.js";
import { relativeTime, commentLabels } from "./format.js";
import { errorToast } from "./toasts.js";
import { diffView } from "./diff_view.js";

const dialog = document.getElementById("history-dialog");
dialog.addEventListener("close", () => dialog.replaceChildren());

async function compare(first, second, into) {
  try {
    const comparison = await backend.compareVersions(first, second);
    into.replaceChildren(
      el("div", { class: "editor-panes compare-panes" }, [
        el("div", { class: "pane", dataset: { version: String(comparison.older.number) } }, [
          el("h3", { text: `Version ${comparison.older.number}` }),
          trustedHtml(el("div", { class: "markdown compare-older" }), comparison.olderHtml),
        ]),
        el("div", { class: "pane", dataset: { version: String(comparison.newer.number) } }, [
          el("h3", { text: `Version ${comparison.newer.number}` }),
          trustedHtml(el("div", { class: "markdown compare-newer" }), comparison.newerHtml),
        ]),
      ]),
      el("h3", { class: "compare-title", text: `From version ${comparison.older.number} to version ${comparison.newer.number}` }),
      el("div", { class: "compare-changes" }, [diffView(comparison.changes, "The same text.")]),
    );
  } catch (error) {
    errorToast(error);
  }
}

export async function openHistory(repo, prNumber, kind) {
  let versions;
  try {
    versions = await backend.commentHistory(repo, prNumber, kind);
  } catch (error) {
    errorToast(error);
    return;
  }
  const comparison = el("section", { class: "comparison" });
  // The two newest are picked at first; picking a third lets go of the oldest pick.
  let picked = versions.slice(-2).map((version) => version.versionId);
  const boxes = new Map();
  const compareButton = button("Compare", () => compare(picked[0], picked[1], comparison), "button primary small compare");
  const syncPicks = () => {
    for (const [id, box] of boxes) box.checked = picked.includes(id);
    compareButton.disabled = picked.length !== 2;
  };
  const timeline = el("ol", { class: "timeline" }, [...versions].reverse().map((version) => {
    const box = el("input", { type: "checkbox", attrs: { "aria-label": `Pick version ${version.number}` } });
    boxes.set(version.versionId, box);
    box.addEventListener("change", () => {
      picked = picked.filter((id) => id !== version.versionId);
      if (box.checked) picked = [...picked, version.versionId].slice(-2);
      syncPicks();
    });
    return el("li", { class: "timeline-entry", dataset: { origin: version.origin, version: String(version.number), discarded: String(version.discarded) } }, [
      el("label", { class: "timeline-pick" }, [
        box,
        el("strong", { text: `v${version.number}` }),
        el("span", { text: version.how }),
        el("span", { class: "muted", text: relativeTime(version.createdAt), title: new Date(version.createdAt).toLocaleString() }),
        version.awaitsApproval ? el("span", { class: "badge warning", text: "awaits your approval" }) : null,
        version.discarded ? el("span", { class: "badge", text: "discarded, never sent" }) : null,
      ]),
    ]);
  }));
  syncPicks();
  dialog.replaceChildren(el("div", { class: "history" }, [
    el("header", { class: "editor-header" }, [
      el("h2", { text: `History · ${commentLabels[kind] ?? kind} · #${prNumber}` }),
      el("span", { class: "badge", text: `${versions.length} versions` }),
    ]),
    versions.length
      ? el("div", { class: "history-body" }, [
          el("div", { class: "history-side" }, [el("p", { class: "hint", text: "Pick two versions to compare." }), timeline, compareButton]),
          comparison,
        ])
      : el("p", { class: "muted", text: "No version yet." }),
    el("div", { class: "modal-actions" }, [button("Close", () => dialog.close(), "button quiet")]),
  ]));
  dialog.showModal();
  if (picked.length === 2) compare(picked[0], picked[1], comparison);
  else if (versions.length === 1) comparison.replaceChildren(el("p", { class: "muted", text: "Only one version so far." }));
}
