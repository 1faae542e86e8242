// Editing a managed comment (D3, D4): the markdown beside its rendered preview, the
// changes against the agent's original as a diff, and a save that syncs to GitHub.
// If the comment changed on GitHub meanwhile, nothing is overwritten: both texts are
// shown and the owner chooses.

import { backend } from "./backend.js";
import { el, button, trustedHtml } from "./dom.js";
import { commentLabels } from "./format.js";
import { toast, errorToast } from "./toasts.js";

const dialog = document.getElementById("comment-dialog");
// A closed editor leaves nothing behind: the next one starts from what is stored.
dialog.addEventListener("close", () => dialog.replaceChildren());

function diffView(lines) {
  if (!lines.length) return el("p", { class: "muted", text: "Nothing yet." });
  const same = lines.every((line) => line.change === "same");
  if (same) return el("p", { class: "muted", text: "Same as the AI's original." });
  return el("pre", { class: "diff" }, lines.map((line) =>
    el("span", {
      class: `diff-${line.change}`,
      text: `${line.change === "added" ? "+ " : line.change === "removed" ? "- " : "  "}${line.text}\n`,
    })));
}

export async function openCommentEditor(repo, prNumber, kind, onSaved) {
  let editor;
  try {
    editor = await backend.openComment(repo, prNumber, kind);
  } catch (error) {
    errorToast(error);
    return;
  }
  const text = el("textarea", { class: "editor-text", attrs: { spellcheck: "true", "aria-label": "Markdown" } });
  text.value = editor.content;
  const preview = trustedHtml(el("div", { class: "markdown editor-preview", attrs: { "aria-label": "Preview" } }), editor.contentHtml);
  const changes = el("div", { class: "editor-changes" }, [diffView(editor.changesFromAgent)]);
  const status = el("p", { class: "editor-status hint" });
  if (editor.note) status.textContent = editor.note;

  // Escape does not throw away unsaved words: only "Cancel" does.
  dialog.oncancel = (event) => {
    if (text.isConnected && text.value !== editor.content) {
      event.preventDefault();
      status.textContent = "You have unsaved changes: save them, or press Cancel to discard them.";
    }
  };

  let timer = null;
  text.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      try {
        trustedHtml(preview, await backend.previewMarkdown(text.value));
      } catch (error) {
        errorToast(error);
      }
    }, 150);
  });

  const save = button("Save to GitHub", async () => {
    save.disabled = true;
    try {
      const result = await backend.saveComment(repo, prNumber, kind, text.value, editor.version.id);
      handleSave(result);
    } catch (error) {
      errorToast(error);
    } finally {
      save.disabled = false;
    }
  }, "button primary");

  const handleSave = (result) => {
    if (result.outcome === "conflict") {
      showConflict(result.conflict, result.message);
      return;
    }
    toast(result.message, { kind: result.outcome === "sent" ? "success" : "info" });
    dialog.close();
    onSaved?.();
  };

  const showConflict = (conflict, message) => {
    const choose = (keepMine) => async () => {
      try {
        handleSave(await backend.resolveCommentConflict(conflict.entryId, keepMine));
      } catch (error) {
        errorToast(error);
      }
    };
    dialog.replaceChildren(el("div", { class: "editor conflict" }, [
      el("h2", { text: "Changed on GitHub meanwhile" }),
      el("p", { text: message }),
      el("div", { class: "editor-panes" }, [
        el("div", { class: "pane" }, [el("h3", { text: "On GitHub now" }), trustedHtml(el("div", { class: "markdown" }), conflict.theirsHtml)]),
        el("div", { class: "pane" }, [el("h3", { text: "Yours" }), trustedHtml(el("div", { class: "markdown" }), conflict.mineHtml)]),
      ]),
      el("h3", { text: "From GitHub's text to yours" }),
      diffView(conflict.changes),
      el("div", { class: "modal-actions" }, [
        button("Take GitHub's", choose(false), "button quiet"),
        button("Keep mine", choose(true), "button primary"),
      ]),
    ]));
  };

  const tabs = el("div", { class: "editor-tabs", attrs: { role: "tablist" } });
  const panes = el("div", { class: "editor-panes" }, [
    el("div", { class: "pane" }, [el("h3", { text: "Markdown" }), text]),
    el("div", { class: "pane" }, [el("h3", { text: "Preview" }), preview]),
  ]);
  const showPanes = (which) => {
    panes.hidden = which !== "edit";
    changes.hidden = which !== "changes";
    for (const tab of tabs.children) tab.setAttribute("aria-selected", String(tab.dataset.pane === which));
  };
  tabs.append(
    el("button", { type: "button", class: "tab", text: "Edit", dataset: { pane: "edit" }, onClick: () => showPanes("edit") }),
    el("button", { type: "button", class: "tab", text: "Changes vs the AI's original", dataset: { pane: "changes" }, onClick: () => showPanes("changes") }),
  );
  changes.hidden = true;

  dialog.replaceChildren(el("div", { class: "editor", dataset: { kind } }, [
    el("header", { class: "editor-header" }, [
      el("h2", { text: `${commentLabels[kind] ?? kind} · #${prNumber}` }),
      el("span", { class: "badge", text: `version ${editor.version.number} of ${editor.history.length}` }),
    ]),
    // The header line GitHub shows above the content, without its markdown heading marks.
    el("p", { class: "hint", text: "Shown under the heading: " + editor.header.replace(/^#+\s*/, "") }),
    tabs,
    panes,
    changes,
    status,
    el("div", { class: "modal-actions" }, [button("Cancel", () => dialog.close(), "button quiet"), save]),
  ]));
  showPanes("edit");
  dialog.showModal();
}
