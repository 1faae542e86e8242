// The two forms: new feedback (F1) and signing in with a pasted token (D7).

import { backend } from "./backend.js";
import { toast } from "./toasts.js";

const feedbackDialog = document.getElementById("feedback-dialog");
const feedbackForm = document.getElementById("feedback-form");
const feedbackError = document.getElementById("feedback-error");
const signInDialog = document.getElementById("sign-in-dialog");
const signInForm = document.getElementById("sign-in-form");
const signInError = document.getElementById("sign-in-error");

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
    showError(feedbackError, { message: "Connect a repository first: handoff repo add owner/name" });
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

export function openSignIn(onSignedIn) {
  signInError.hidden = true;
  signInForm.reset();
  signInDialog.onsignedin = onSignedIn;
  signInDialog.showModal();
}

signInForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(signInForm);
  try {
    const status = await backend.signIn(String(data.get("token") ?? ""), String(data.get("apiBase") ?? "") || null);
    signInDialog.close();
    toast(`Signed in as ${status.login}`, { kind: "success" });
    signInDialog.onsignedin?.(status);
  } catch (error) {
    showError(signInError, error);
  }
});
document.getElementById("sign-in-cancel").addEventListener("click", () => signInDialog.close());
