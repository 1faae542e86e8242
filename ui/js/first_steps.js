// @ts-check
// The empty board teaches: from a fresh install to a first pull request, each step a
// button, and each one marked once it is done.

import { el, button } from "./dom.js";

const list = document.getElementById("first-steps");

export function renderFirstSteps(session, actions) {
  const steps = [
    {
      id: "sign-in",
      title: "Sign in to GitHub",
      text: "In your browser with a code, or with a token. The token stays in your system's keyring.",
      done: Boolean(session.signedIn),
      doneText: session.login ? `Signed in as @${session.login}` : "Signed in",
      buttons: [["Sign in", actions.signIn]],
    },
    {
      id: "connect",
      title: "Connect a repository",
      text: "Pick one of your repositories, then choose its sandbox and agent.",
      done: (session.connectedRepos ?? 0) > 0,
      doneText: `${session.connectedRepos} connected`,
      buttons: [["Connect a repository", actions.connect]],
    },
    {
      id: "check",
      title: "Check setup",
      text: "Docker, the agent's image and key, E2B: each checked, with a button for what is missing.",
      done: false,
      buttons: [["Check setup", actions.checkSetup]],
    },
    {
      id: "feedback",
      title: "Add feedback, or sync issues",
      text: "Write what should change, or mirror the issues labelled “feedback”. Then press Run agent.",
      done: false,
      buttons: [["New feedback", actions.newFeedback], ["Sync with GitHub", actions.sync]],
    },
  ];
  list.replaceChildren(
    ...steps.map((step, index) =>
      el("li", { class: `first-step ${step.done ? "done" : ""}`, dataset: { step: step.id, done: String(step.done) } }, [
        el("span", { class: "step-number", text: step.done ? "✓" : String(index + 1) }),
        el("div", { class: "step-text" }, [
          el("strong", { text: step.title }),
          el("p", { class: "hint", text: step.done ? step.doneText : step.text }),
        ]),
        el("div", { class: "step-buttons" }, step.buttons.map(([label, run]) => button(label, run, `button ${step.done ? "quiet" : "primary"} small`))),
      ]),
    ),
  );
}
