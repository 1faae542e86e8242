// @ts-check
// The outbox: your edits not on GitHub yet (saved offline, waiting for another try,
// refused by GitHub, or in conflict), each with its last error, Send now and Discard.
// Discarding asks first; a discarded edit is never sent and stays in the history.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { relativeTime, commentLabels } from "./format.js";
import { toast, errorToast } from "./toasts.js";
import { ask } from "./question.js";

const dialog = document.getElementById("outbox-dialog");
const openButton = document.getElementById("open-outbox");
const count = document.getElementById("outbox-count");
let onChange = () => {};

export function configureOutbox(changed) {
  onChange = changed;
}

export async function refreshOutboxButton() {
  try {
    const items = await backend.outboxItems();
    openButton.hidden = items.length === 0;
    count.textContent = String(items.length);
    openButton.dataset.count = String(items.length);
    if (dialog.open) renderOutbox(items);
  } catch (error) {
    openButton.hidden = true;
  }
}

export async function discardWithQuestion(entryId, versionNumber) {
  const answer = await ask({
    title: "Discard this edit?",
    text: `It will not be sent to GitHub. Its text stays in the comment's history${versionNumber ? ` as version ${versionNumber}` : ""}.`,
    answers: [
      { label: "Keep it", value: "keep", kind: "quiet" },
      { label: "Discard", value: "discard", kind: "danger" },
    ],
  });
  if (answer !== "discard") return false;
  try {
    await backend.discardOutboxEntry(entryId);
    toast("Discarded: it stays in the history, and will not be sent");
    onChange();
    return true;
  } catch (error) {
    errorToast(error);
    return false;
  }
}

const stateWords = {
  pending: "waiting to be sent",
  conflict: "changed on GitHub meanwhile: choose in the PR's workspace",
  failed: "refused by GitHub",
};

function renderOutbox(items) {
  const list = el("ol", { class: "outbox-list" }, items.map((item) => el("li", { class: "outbox-item", dataset: { entryId: String(item.entryId), state: item.state } }, [
    el("div", { class: "outbox-what" }, [
      el("strong", { text: `${commentLabels[item.kind] ?? item.kind} · #${item.prNumber}` }),
      el("span", { class: "mono muted", text: item.repo }),
      item.versionNumber != null ? el("span", { class: "badge", text: `version ${item.versionNumber}` }) : null,
    ]),
    el("p", { class: "outbox-state", text: `${stateWords[item.state] ?? item.state} · saved ${relativeTime(item.savedAt)} · ${item.attempts === 1 ? "1 try" : `${item.attempts} tries`}` }),
    item.lastError ? el("p", { class: "hint outbox-error", text: `Last error: ${item.lastError}` }) : null,
    el("div", { class: "update-row" }, [
      button("Send now", async () => {
        try {
          const result = await backend.sendOutboxEntry(item.entryId);
          toast(result.message, { kind: result.outcome === "sent" ? "success" : "info" });
          onChange();
        } catch (error) {
          errorToast(error);
        }
      }, "button small primary send-now"),
      button("Discard", () => discardWithQuestion(item.entryId, item.versionNumber), "button small danger discard"),
    ]),
  ])));
  dialog.replaceChildren(el("div", { class: "outbox" }, [
    el("h2", { text: "Outbox" }),
    el("p", { class: "hint", text: "Your edits that are not on GitHub yet. They are sent by themselves once GitHub can be reached; nothing here is lost if Handoff closes." }),
    items.length ? list : el("p", { class: "muted", text: "Empty: everything is on GitHub." }),
    el("div", { class: "modal-actions" }, [button("Close", () => dialog.close(), "button quiet")]),
  ]));
}

export async function openOutbox() {
  try {
    renderOutbox(await backend.outboxItems());
    dialog.showModal();
  } catch (error) {
    errorToast(error);
  }
}

openButton.addEventListener("click", openOutbox);
