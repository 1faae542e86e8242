// @ts-check
// A question in a small dialog, answered by one of its buttons: `ask` resolves with the
// chosen answer's value, or null when the dialog is closed without one (Escape).

import { el, button } from "./dom.js";

const dialog = document.getElementById("question-dialog");

export function ask({ title, text, answers }) {
  return new Promise((resolve) => {
    let chosen = null;
    const buttons = answers.map((answer) => button(answer.label, () => {
      chosen = answer.value;
      dialog.close();
    }, `button ${answer.kind ?? ""}`.trim()));
    for (const [index, answer] of answers.entries()) buttons[index].dataset.answer = String(answer.value);
    dialog.replaceChildren(el("div", { class: "question" }, [
      el("h2", { text: title }),
      ...text.split("\n").map((line) => el("p", { text: line })),
      el("div", { class: "modal-actions" }, buttons),
    ]));
    dialog.onclose = () => {
      dialog.onclose = null;
      dialog.replaceChildren();
      resolve(chosen);
    };
    dialog.showModal();
  });
}
