// @ts-check
// The new-feedback form.

import { backend } from "./backend.js";
import { toast } from "./toasts.js";

const feedbackDialog = document.getElementById("feedback-dialog");
const feedbackForm = document.getElementById("feedback-form");
const feedbackError = document.getElementById("feedback-error");

function showError(element, error) {
  element.hidden = false;
  element.textContent = error.message ?? String(error);
}

export async function openNewFeedback(onAdded) {
  const repos = await backend.repos();
  const select = document.getElementById("feedback-repo");
  select.replaceChildren(...repos.map((repo) => {
    const name = `${repo.name.owner}/${repo.name.name}`;
    return new Option(name, name);
  }));
  feedbackError.hidden = true;
  feedbackForm.reset();
  if (!repos.length) {
    showError(feedbackError, { message: "Connect a repository first (Settings → Repositories)." });
  }
  feedbackDialog.onsubmitted = onAdded;
  feedbackDialog.showModal();
}

feedbackForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(feedbackForm);
  try {
    const feedback = await backend.addFeedback({ repo: data.get("repo") ?? "", title: data.get("title") ?? "", body: data.get("body") ?? "" });
    feedbackDialog.close();
    toast(`Feedback ${feedback.id} added`, { kind: "success" });
    feedbackDialog.onsubmitted?.(feedback);
  } catch (error) {
    showError(feedbackError, error);
  }
});
document.getElementById("feedback-cancel").addEventListener("click", () => feedbackDialog.close());

