// @ts-check
// A stage's comment as a pane of the PR workspace: the markdown being edited, its
// rendered preview and the changes against the agent's original, side by side, the
// first two scrolling together. Save sends it to GitHub; when the comment changed there
// meanwhile nothing is overwritten: both texts are shown and the owner chooses. An edit
// waiting in the outbox says so, with its last error, Send now and Discard.

import { backend } from "./backend.js";
import { el, button, trustedHtml } from "./dom.js";
import { commentLabels } from "./format.js";
import { toast, errorToast } from "./toasts.js";
import { openHistory } from "./history.js";
import { diffView } from "./diff_view.js";
import { discardWithQuestion } from "./outbox.js";

const conflictDialog = document.getElementById("conflict-dialog");
conflictDialog.addEventListener("close", () => conflictDialog.replaceChildren());

// Panes with unsaved words survive the workspace's re-renders, by PR and kind.
const keptPanes = new Map();

export function forgetPanes() {
  keptPanes.clear();
}

const stageWords = { review: "Review", plan: "Plan", test: "Test", fix: "Fix" };

// Scrolling one of two panes scrolls the other to the same share of its length.
function scrollTogether(first, second) {
  let leading = null;
  const follow = (from, to) => () => {
    if (leading && leading !== from) return;
    leading = from;
    const range = from.scrollHeight - from.clientHeight;
    const share = range > 0 ? from.scrollTop / range : 0;
    to.scrollTop = share * (to.scrollHeight - to.clientHeight);
    requestAnimationFrame(() => { leading = null; });
  };
  first.addEventListener("scroll", follow(first, second));
  second.addEventListener("scroll", follow(second, first));
}

function badges(pane) {
  const list = [el("span", { class: "badge", text: `version ${pane.version.number} of ${pane.versions}` })];
  if (pane.awaitsApproval) list.push(el("span", { class: "badge warning", text: `edited by ${pane.writtenBy} · awaits your approval` }));
  else if (pane.editedByYou) list.push(el("span", { class: "badge edited edited-by-you", text: "edited by you" }));
  else if (pane.writtenBy === "the agent") list.push(el("span", { class: "badge", text: "AI" }));
  else list.push(el("span", { class: "badge edited", text: `edited by ${pane.writtenBy}` }));
  if (pane.missing) list.push(el("span", { class: "badge warning", text: "deleted on GitHub" }));
  return list;
}

function unsentNotice(pane, refresh) {
  if (!pane.unsent.length) return null;
  const entry = pane.unsent[pane.unsent.length - 1];
  const words = entry.state === "conflict"
    ? "Your edit waits in the outbox: the comment changed on GitHub since, so it asks before overwriting."
    : entry.state === "failed"
      ? "GitHub refused your edit; it waits in the outbox."
      : "Your edit is saved here and waits in the outbox to reach GitHub.";
  return el("div", { class: "unsent-notice", dataset: { entryId: String(entry.entryId), state: entry.state } }, [
    el("p", { text: words }),
    entry.lastError ? el("p", { class: "hint unsent-error", text: `Last error: ${entry.lastError}` }) : null,
    el("div", { class: "update-row" }, [
      button("Send now", async () => {
        try {
          handleSave(await backend.sendOutboxEntry(entry.entryId), refresh);
        } catch (error) {
          errorToast(error);
        }
      }, "button small send-now"),
      button("Discard", async () => {
        if (await discardWithQuestion(entry.entryId, pane.version?.number)) refresh();
      }, "button small danger discard"),
    ]),
  ]);
}

function handleSave(result, refresh) {
  if (result.outcome === "conflict") {
    showConflict(result.conflict, result.message, refresh);
    return;
  }
  toast(result.message, { kind: result.outcome === "sent" ? "success" : "info" });
  refresh();
}

function showConflict(conflict, message, refresh) {
  const choose = (keepMine) => async () => {
    try {
      const result = await backend.resolveCommentConflict(conflict.entryId, keepMine);
      conflictDialog.close();
      handleSave(result, refresh);
    } catch (error) {
      errorToast(error);
    }
  };
  conflictDialog.replaceChildren(el("div", { class: "editor conflict" }, [
    el("h2", { text: "Changed on GitHub meanwhile" }),
    el("p", { text: message }),
    el("div", { class: "editor-panes" }, [
      el("div", { class: "pane" }, [el("h3", { text: "On GitHub now" }), trustedHtml(el("div", { class: "markdown" }), conflict.theirsHtml)]),
      el("div", { class: "pane" }, [el("h3", { text: "Yours" }), trustedHtml(el("div", { class: "markdown" }), conflict.mineHtml)]),
    ]),
    el("h3", { text: "From GitHub's text to yours" }),
    diffView(conflict.changes, "The same text."),
    el("div", { class: "modal-actions" }, [
      button("Take GitHub's", choose(false), "button quiet take-github"),
      button("Keep mine", choose(true), "button primary keep-mine"),
    ]),
  ]));
  conflictDialog.showModal();
}

/**
 * A pane's editor: its markdown, its preview and its changes against the agent's
 * original, drawn again as the owner types.
 * @param {import("./contract.js").CommentPane} pane
 * @param {HTMLElement} section
 */
function paneEditor(pane, section) {
  const text = el("textarea", { class: "pane-text", attrs: { spellcheck: "true", "aria-label": `Markdown of the ${pane.kind}` } });
  text.value = pane.content;
  const preview = trustedHtml(el("div", { class: "markdown pane-preview", attrs: { "aria-label": `Preview of the ${pane.kind}` } }), pane.contentHtml);
  const changes = el("div", { class: "pane-changes" }, [diffView(pane.changesFromAgent)]);
  scrollTogether(text, preview);
  const status = el("p", { class: "hint pane-status" });
  let timer = null;
  // Each preview asked for gets a number; an answer that comes back after a newer one
  // was asked for is dropped, so a slow answer never paints over newer words.
  let previewsAsked = 0;
  text.addEventListener("input", () => {
    status.textContent = text.value !== pane.content ? "Not saved yet." : "";
    section.dataset.dirty = String(text.value !== pane.content);
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const asked = ++previewsAsked;
      try {
        const shown = await backend.previewEdit(text.value, pane.agentOriginal);
        if (asked !== previewsAsked) return;
        trustedHtml(preview, shown.html);
        changes.replaceChildren(diffView(shown.changesFromAgent));
      } catch (error) {
        errorToast(error);
      }
    }, 150);
  });
  return { text, preview, changes, status };
}

// The pane of `pane` (a CommentPane from the workspace) on `workspace`'s PR.
export function commentPane(workspace, pane, refresh) {
  const key = `${workspace.repo}#${workspace.pull.number}:${pane.kind}`;
  // A pane is drawn anew only when what it shows changed: one being typed into, or one
  // showing the same version the same way, stays as it is (with its focus and scroll).
  const signature = JSON.stringify([
    pane.version?.id, pane.versions, pane.awaitsApproval, pane.missing,
    pane.unsent.map((entry) => [entry.entryId, entry.state, entry.attempts]),
  ]);
  const kept = keptPanes.get(key);
  if (kept && (kept.isDirty() || kept.signature === signature)) return kept.element;
  keptPanes.delete(key);

  const title = el("h3", { text: commentLabels[pane.kind] ?? pane.kind });
  const section = el("article", { class: "comment-pane", dataset: { kind: pane.kind } });
  if (!pane.version) {
    section.append(
      el("header", { class: "pane-header" }, [title]),
      el("p", { class: "muted pane-empty", text: `No ${pane.kind} comment on the PR yet: run the ${pane.writtenByStage} stage to write one.` }),
    );
    return section;
  }

  const { text, preview, changes, status } = paneEditor(pane, section);
  const basedOn = pane.version.id;

  const save = button("Save to GitHub", async () => {
    save.disabled = true;
    try {
      const result = await backend.saveComment(workspace.repo, workspace.pull.number, pane.kind, text.value, basedOn);
      keptPanes.delete(key);
      handleSave(result, refresh);
    } catch (error) {
      errorToast(error);
    } finally {
      save.disabled = false;
    }
  }, "button primary small save-pane");

  const approve = pane.awaitsApproval
    ? button("Approve for the next stage", async () => {
        try {
          await backend.approveCommentVersion(pane.version.id);
          toast(`Version ${pane.version.number} approved: the next stage may read it`);
          refresh();
        } catch (error) {
          errorToast(error);
        }
      }, "button small approve-version")
    : null;

  const readBy = pane.readByStage
    ? el("p", { class: "hint reads-next", text: `${stageWords[pane.readByStage]} reads this text as it is on GitHub: your corrections included.` })
    : null;

  section.append(...[
    el("header", { class: "pane-header" }, [
      title,
      ...badges(pane),
      el("span", { class: "pane-actions" }, [
        button("History", () => openHistory(workspace.repo, workspace.pull.number, pane.kind), "button small quiet open-history"),
        approve,
        save,
      ]),
    ]),
    readBy,
    pane.awaitsApproval
      ? el("p", { class: "hint approval-hint", text: `Edited on GitHub by ${pane.writtenBy}, not by you: no stage reads it until you approve this version.` })
      : null,
    unsentNotice(pane, refresh),
    el("div", { class: "pane-columns" }, [
      el("div", { class: "pane" }, [el("h4", { text: "Markdown" }), text]),
      el("div", { class: "pane" }, [el("h4", { text: "Preview" }), preview]),
      el("div", { class: "pane" }, [el("h4", { text: "Changes from the AI's original" }), changes]),
    ]),
    status,
  ].filter(Boolean));
  keptPanes.set(key, { element: section, signature, isDirty: () => text.isConnected && text.value !== pane.content });
  return section;
}
