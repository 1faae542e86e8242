// @ts-check
// Runs of several items at once. The owner picks NEW or FAILED cards with their boxes
// and runs them from the bar above the board, or queues every new item of a repository
// ("Run all new…" on the NEW column). Each item's run waits in the run queue for a
// slot; the answer says which were queued and which were refused, and why.

import { backend } from "./backend.js";
import { plural } from "./format.js";
import { ask } from "./question.js";
import { toast, errorToast } from "./toasts.js";

const bar = document.getElementById("run-bar");
const count = document.getElementById("run-bar-count");
const runPicked = document.getElementById("run-picked");

/** @type {Set<number>} */
const picked = new Set();
let hooks = { redraw: () => {}, repoShown: () => "" };

function showBar() {
  bar.hidden = picked.size === 0;
  count.textContent = `${plural(picked.size, "item")} picked`;
  runPicked.textContent = `Run ${picked.size} picked`;
}

// What came of a run of several items, said once.
function tell(answer) {
  const queued = answer.queued.length;
  if (answer.refused.length === 0) {
    toast(`${plural(queued, "run")} queued; each starts when a slot is free`, { kind: "success" });
    return;
  }
  const first = answer.refused[0];
  errorToast({
    code: first.code,
    message: `${plural(queued, "run")} queued, ${answer.refused.length} refused. Feedback ${first.feedbackId}: ${first.message}`,
  });
}

async function runThePicked() {
  const ids = [...picked];
  runPicked.disabled = true;
  try {
    const answer = await backend.startCodeRuns(ids);
    picked.clear();
    showBar();
    tell(answer);
    hooks.redraw();
  } catch (error) {
    errorToast(error);
  } finally {
    runPicked.disabled = false;
  }
}

async function runAllNew() {
  try {
    const shown = hooks.repoShown();
    const repos = (await backend.newItemsByRepo()).filter((repo) => !shown || repo.repo === shown);
    if (repos.length === 0) {
      toast("No new item to run");
      return;
    }
    const chosen = await ask({
      title: "Run all new items",
      text: "Each new item of the repository gets a run; the runs wait in the run queue for a slot.\nItems that wait for your approval are left out.",
      answers: [
        ...repos.map((repo) => ({ label: `Run ${repo.count} in ${repo.repo}`, value: repo.repo, kind: "primary" })),
        { label: "Cancel", value: "", kind: "quiet" },
      ],
    });
    if (!chosen) return;
    tell(await backend.runAllNew(chosen));
    hooks.redraw();
  } catch (error) {
    errorToast(error);
  }
}

/**
 * Gives the board's `actions` what picking needs; `redraw` draws the board again,
 * `repoShown` names the repository the board is filtered to (empty: all).
 */
export function configureBulkRuns(actions, { redraw, repoShown }) {
  hooks = { redraw, repoShown };
  actions.picked = picked;
  actions.pick = (feedbackId, on) => {
    if (on) picked.add(feedbackId);
    else picked.delete(feedbackId);
    showBar();
    redraw();
  };
  actions.runAllNew = runAllNew;
  runPicked.addEventListener("click", runThePicked);
  document.getElementById("clear-picked").addEventListener("click", () => {
    picked.clear();
    showBar();
    redraw();
  });
}

/** Forgets picked items the board no longer shows as NEW or FAILED. */
export function keepPickedOn(dashboard) {
  const runnable = new Set(dashboard.groups
    .filter((group) => group.status === "NEW" || group.status === "FAILED")
    .flatMap((group) => group.cards.map((card) => card.feedbackId)));
  for (const id of [...picked]) if (!runnable.has(id)) picked.delete(id);
  showBar();
}
