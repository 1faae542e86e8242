// @ts-check
// A pull request's workspace: the stage strip Review → Plan → Test → Fix and Full auto,
// each with its state, its button (the quota it takes said on it), its live log and
// Cancel; each stage's comment as an editable pane; the latest test results with the
// issues filed for them. Re-running a stage over your edit of its comment asks first.

import { backend } from "./backend.js";
import { el, button, trustedHtml } from "./dom.js";
import { relativeTime } from "./format.js";
import { toast, errorToast } from "./toasts.js";
import { commentPane, forgetPanes } from "./comment_pane.js";
import { ask } from "./question.js";
import { followLogInto } from "./run_log.js";

const section = document.getElementById("pr-workspace");
let shown = null; // { repo, number }
let actions = { back: () => {}, openFeedback: () => {} };
let loadGeneration = 0;
// The log being followed, kept across re-renders.
let followed = null; // { runId, element }

export function configureWorkspace(handlers) {
  actions = handlers;
}

export function shownWorkspace() {
  return shown;
}

// Whether the workspace on screen is one of `pullRequests` ({ repoId, number } each).
export function workspaceShows(pullRequests) {
  return Boolean(shown) && pullRequests.some((pull) =>
    pull.number === shown.number && (shown.repoId == null || pull.repoId === shown.repoId));
}

export function closeWorkspace() {
  shown = null;
  drawnSignature = null;
  followed = null;
  forgetPanes();
  section.replaceChildren();
  delete section.dataset.repo;
  delete section.dataset.number;
}

const stageTitles = { review: "Review", plan: "Plan", test: "Test", fix: "Fix", "full-auto": "Full auto" };
const checkWords = { success: "checks pass", failure: "checks fail", pending: "checks running", none: "no checks" };

// A load in flight is not overtaken by a refresh the mirror asked for: that refresh
// waits and runs once the load is drawn.
let loading = false;
let refreshAgain = false;
let drawnSignature = null;

export async function openWorkspace(repo, number, { refresh = true, quiet = false } = {}) {
  if (!shown || shown.repo !== repo || shown.number !== number) {
    followed = null;
    forgetPanes();
  }
  shown = { repo, number };
  const mine = ++loadGeneration;
  loading = true;
  let view = null;
  try {
    view = await backend.openWorkspace(repo, number, refresh);
  } catch (error) {
    if (mine === loadGeneration && !quiet) errorToast(error);
  } finally {
    if (mine === loadGeneration) loading = false;
  }
  if (view && mine === loadGeneration && shown && shown.repo === repo && shown.number === number) {
    // A run's heartbeat changes the mirror every few seconds; the workspace is drawn
    // again only when what it shows changed, so a button is never swapped under the
    // pointer for nothing.
    const signature = JSON.stringify([followed?.runId ?? null, view]);
    shown.repoId = view.pull.repoId;
    if (signature !== drawnSignature) {
      drawnSignature = signature;
      render(view);
    }
  }
  if (!loading && refreshAgain) {
    refreshAgain = false;
    refreshWorkspace();
  }
}

export function refreshWorkspace() {
  if (!shown) return;
  if (loading) {
    refreshAgain = true;
    return;
  }
  openWorkspace(shown.repo, shown.number, { refresh: false, quiet: true });
}

function followLog(runId, stage) {
  if (followed?.runId === runId) return;
  const log = el("pre", { class: "run-log stage-log", attrs: { "aria-label": `Log of run ${runId}` }, dataset: { runId: String(runId) } });
  followed = { runId, stage, element: log };
  followLogInto(runId, log);
  refreshWorkspace();
}

async function startStage(view, card) {
  const run = async (force) => backend.startQaStage(view.repo, view.pull.number, card.stage, force);
  let runId;
  try {
    runId = await run(false);
  } catch (error) {
    if (error.code !== "owner_edits") {
      errorToast(error);
      return;
    }
    const answer = await ask({
      title: "Run over your edit?",
      text: `${error.message}.\nKeep your edit and do not run, or run anyway: the stage's new text replaces yours on GitHub, and yours stays in the history.`,
      answers: [
        { label: "Keep my edit", value: "keep", kind: "quiet" },
        { label: "Run anyway", value: "run", kind: "primary" },
      ],
    });
    if (answer !== "run") {
      toast("Kept your edit: nothing ran");
      return;
    }
    try {
      runId = await run(true);
    } catch (again) {
      errorToast(again);
      return;
    }
  }
  toast(`Run ${runId} started: ${stageTitles[card.stage]}`);
  followLog(runId, card.stage);
}

function stageCard(view, card) {
  const lastRun = card.activeRunId ?? card.lastRun?.id ?? "";
  const item = el("li", { class: "stage-card", dataset: { stage: card.stage, state: card.state, run: String(lastRun) } }, [
    el("header", { class: "stage-header" }, [
      el("h3", { text: stageTitles[card.stage] ?? card.stage }),
      el("span", { class: "stage-state", dataset: { state: card.state }, text: card.stateWords }),
    ]),
  ]);
  if (card.editedByYou && card.state !== "edited_by_you" && card.stage !== "full-auto") {
    item.append(el("span", { class: "badge edited edited-by-you", text: "edited by you" }));
  }
  if (card.outOfDate) item.append(el("p", { class: "stage-out-of-date", text: `Out of date: ${card.outOfDate}` }));
  if (card.lastRun) {
    const run = card.lastRun;
    item.append(el("p", { class: "stage-last-run muted", text: `Run ${run.id} · ${run.status} · ${relativeTime(run.finishedAt ?? run.startedAt ?? run.createdAt)}` }));
    if (run.failureMessage) item.append(el("p", { class: "run-failure", text: run.failureMessage }));
  }
  for (const note of card.notes) item.append(el("p", { class: "run-note stage-note", text: `⚠ ${note}` }));
  const go = button(card.buttonLabel, () => startStage(view, card), "button primary small run-stage");
  go.disabled = !card.buttonEnabled;
  go.title = card.hint;
  const buttons = el("div", { class: "stage-actions" }, [go]);
  if (card.activeRunId != null) {
    buttons.append(button("Cancel", async () => {
      try {
        await backend.cancelRun(card.activeRunId);
        toast(`Cancelling run ${card.activeRunId}…`);
      } catch (error) {
        errorToast(error);
      }
    }, "button small danger cancel-stage"));
  }
  const logRun = card.activeRunId ?? card.lastRun?.id;
  if (logRun != null && followed?.runId !== logRun) {
    buttons.append(button("Log", () => followLog(logRun, card.stage), "button small quiet show-log"));
  }
  item.append(buttons, el("p", { class: "hint stage-hint", text: card.hint }));
  return item;
}

function testResults(view) {
  const results = view.testResults;
  const block = el("section", { class: "test-results" }, [
    el("h3", { text: results ? `Test results · run ${results.runId} · ${results.passed} passed, ${results.failed} failed` : "Test results" }),
  ]);
  if (!results) {
    block.append(el("p", { class: "muted", text: "No test run yet." }));
    return block;
  }
  const rows = results.rows.map((row) => el("tr", { class: "result-row", dataset: { passed: String(row.passed) } }, [
    el("td", { class: "result-mark", text: row.passed ? "✓ pass" : "✗ fail" }),
    el("td", { class: "result-name", text: row.name }),
    el("td", {}, [trustedHtml(el("div", { class: "markdown result-evidence" }), row.evidenceHtml)]),
    el("td", {}, [row.issueUrl
      ? button(`#${row.issueNumber}`, () => backend.openLink(row.issueUrl).catch(errorToast), "pr-link result-issue")
      : el("span", { class: "muted", text: "—" })]),
  ]));
  block.append(el("table", { class: "results-table" }, [
    el("thead", {}, [el("tr", {}, ["Result", "Scenario", "Evidence", "Issue"].map((words) => el("th", { text: words })))]),
    el("tbody", {}, rows),
  ]));
  if (results.failed) block.append(el("p", { class: "hint", text: "Fix works on the failed scenarios above, read from these stored results." }));
  return block;
}

function render(view) {
  const pull = view.pull;
  // Everything is built before the old content goes, so panes with unsaved words are
  // still in the page when they are asked whether they are.
  const header = el("header", { class: "workspace-header" }, [
    button("← Pull requests", () => actions.back(), "button quiet small back"),
    el("h2", { class: "workspace-title" }, [el("span", { class: "mono", text: `#${pull.number} ` }), el("span", { text: pull.title })]),
    el("div", { class: "workspace-meta" }, [
      el("span", { class: "mono", text: view.repo }),
      el("span", { class: "mono", text: `${pull.headRef} → ${pull.baseRef}` }),
      el("span", { text: pull.authorLogin ? `by @${pull.authorLogin}` : "" }),
      el("span", { class: "check-pill", dataset: { checks: pull.checks }, text: checkWords[pull.checks] ?? pull.checks }),
      el("span", { class: "muted", text: `updated ${relativeTime(pull.githubUpdatedAt)}` }),
      view.quota.left != null ? el("span", { class: "badge quota", text: `${view.quota.left} of ${view.quota.quota} runs left this month` }) : null,
      view.fromFork ? el("span", { class: "badge", text: "from a fork" }) : null,
      button("Open on GitHub", () => backend.openWorkspacePullRequest(view.repo, pull.number).catch(errorToast), "button small"),
      button("Reload from GitHub", () => openWorkspace(view.repo, pull.number, { refresh: true }), "button small quiet refresh-workspace"),
      pull.feedbackId != null ? button("Feedback item", () => actions.openFeedback(pull.feedbackId), "button small quiet open-feedback") : null,
    ]),
  ]);
  const note = view.note ? el("p", { class: "hint workspace-note", text: view.note }) : null;
  const strip = el("ol", { class: "stage-strip" }, view.stages.map((card) => stageCard(view, card)));
  let logBlock = null;
  if (followed) {
    logBlock = el("section", { class: "stage-log-block" }, [
      el("header", { class: "pane-header" }, [
        el("h3", { text: `Log of run ${followed.runId} · ${stageTitles[followed.stage] ?? followed.stage}` }),
        button("Hide", () => {
          followed = null;
          refreshWorkspace();
        }, "button small quiet hide-log"),
      ]),
      followed.element,
    ]);
  }
  // The panes stay where they are in the page: one being typed into is never moved, so
  // it keeps its focus, its caret and its scroll while the rest is drawn anew.
  let panes = section.querySelector(":scope > .comment-panes");
  const samePull = section.dataset.repo === view.repo && section.dataset.number === String(pull.number);
  if (!panes || !samePull) panes = el("section", { class: "comment-panes" });
  const paneNodes = view.panes.map((pane) => commentPane(view, pane, refreshWorkspace));
  const old = [...panes.children];
  paneNodes.forEach((node, index) => {
    if (old[index] === node) return;
    if (old[index]) old[index].replaceWith(node);
    else panes.append(node);
  });
  for (const extra of old.slice(paneNodes.length)) extra.remove();
  const scrolled = section.scrollTop;
  for (const child of [...section.children]) if (child !== panes) child.remove();
  if (!panes.isConnected) section.append(panes);
  panes.before(...[header, note, strip, logBlock].filter(Boolean));
  panes.after(testResults(view));
  section.scrollTop = scrolled;
  section.dataset.repo = view.repo;
  section.dataset.number = String(pull.number);
  section.dataset.source = view.source;
  section.dataset.loaded = "true";
}

