// @ts-check
// The detail panel of one feedback item: its body (marked, with an approval, when a
// visitor opened it), "Update PR", the thread (visitor text apart and marked untrusted;
// reviews, inline comments and failing checks taken from the PR as candidates, each
// with Include), the runs with their notes, live logs and the lessons each carried, and
// the PR's managed comments
// (an edit by someone else marked, with its approval), which open in the PR workspace.

import { backend } from "./backend.js";
import { el, button, trustedHtml } from "./dom.js";
import { agentGets } from "./agent_gets.js";
import { relativeTime, runSpend, statusWords, commentLabels } from "./format.js";
import { toast, errorToast } from "./toasts.js";
import { followLogInto } from "./run_log.js";
import { showSteps } from "./run_steps.js";

const panel = document.getElementById("detail");
let shownId = null;
let drawnSignature = null;
let openLogs = new Set();
// Elements that live across re-renders of the same item: the text being typed into
// "Update PR", and the logs being followed (each followed once).
let updateText = null;
const followedLogs = new Map();

function resetKeptElements() {
  updateText = null;
  followedLogs.clear();
}

export function shownFeedback() {
  return shownId;
}

// The pull request of the item shown ({ repoId, number }), once its detail is drawn.
let shownPull = null;

// Whether the item shown is one of `feedbackIds`, or its PR one of `pullRequests`
// (whose stage comments the panel lists).
export function detailShows(feedbackIds, pullRequests) {
  if (shownId == null) return false;
  if (feedbackIds.includes(shownId)) return true;
  return shownPull != null && pullRequests.some((pull) =>
    pull.repoId === shownPull.repoId && pull.number === shownPull.number);
}

export function closeDetail() {
  shownId = null;
  shownPull = null;
  drawnSignature = null;
  openLogs = new Set();
  resetKeptElements();
  panel.hidden = true;
  panel.replaceChildren();
  document.body.classList.remove("with-detail");
}

export async function showDetail(feedbackId) {
  if (shownId !== feedbackId) {
    openLogs = new Set();
    resetKeptElements();
  }
  shownId = feedbackId;
  let detail;
  try {
    detail = await backend.feedbackDetail(feedbackId);
  } catch (error) {
    errorToast(error);
    return;
  }
  if (shownId !== feedbackId) return;
  shownPull = detail.feedback.prNumber != null
    ? { repoId: detail.feedback.repoId, number: detail.feedback.prNumber }
    : null;
  // A run's heartbeat changes the mirror every few seconds: the panel is drawn again
  // only when what it shows changed.
  const signature = JSON.stringify([feedbackId, [...openLogs], detail]);
  if (signature === drawnSignature && !panel.hidden) return;
  drawnSignature = signature;
  // The instructions being typed move into the new panel with their focus and caret:
  // a sync landing mid-word must not send the next keys elsewhere.
  const active = document.activeElement;
  const typing = active instanceof HTMLTextAreaElement && panel.contains(active)
    ? { start: active.selectionStart, end: active.selectionEnd }
    : null;
  panel.replaceChildren(...render(detail));
  if (typing && active.isConnected) {
    active.focus({ preventScroll: true });
    active.setSelectionRange(typing.start, typing.end);
  }
  panel.hidden = false;
  document.body.classList.add("with-detail");
  panel.dataset.feedbackId = String(feedbackId);
  panel.dataset.status = detail.feedback.status;
}

export function refreshDetail() {
  if (shownId != null) showDetail(shownId);
}

function render(detail) {
  const feedback = detail.feedback;
  const header = el("header", { class: "detail-header" }, [
    el("div", { class: "detail-title-row" }, [
      el("h2", { class: "detail-title", text: feedback.title }),
      button("×", closeDetail, "close", "Close the details"),
    ]),
    el("div", { class: "detail-meta" }, [
      el("span", { class: "status-pill", text: statusWords[feedback.status] ?? feedback.status, dataset: { status: feedback.status } }),
      el("span", { class: "mono", text: feedback.repo.owner + "/" + feedback.repo.name }),
      feedback.prNumber != null
        ? button(`PR #${feedback.prNumber}${feedback.prState ? " " + feedback.prState : ""}`, () =>
            backend.openPullRequest(feedback.id).catch(errorToast), "pr-link")
        : el("span", { class: "muted", text: "no PR yet" }),
      el("span", { class: "mono muted", text: feedback.headBranch }),
    ]),
  ]);
  // An Update PR adds commits and never rebases: a conflict is the owner's to settle.
  if (detail.conflictsWithBase) {
    header.append(el("p", {
      class: "pr-conflicts",
      text: `PR #${feedback.prNumber} conflicts with its base branch: an Update PR adds commits but does not rebase, so resolve the conflict on GitHub or locally.`,
    }));
  }
  const body = trustedHtml(el("div", { class: "markdown detail-body" }), detail.bodyHtml);
  return [header, renderPlace(feedback), renderOrigin(feedback, detail.bodyRaw), body, renderUpdate(detail), renderAutomaticUpdates(detail), renderThread(detail), renderRuns(detail), renderComments(detail)]
    .filter(Boolean);
}

const offTheBoardWords = {
  closed: "Closed on GitHub",
  dismissed: "Dismissed",
  archived: "Archived",
};

// Whether the item is on the board: Dismiss and Archive take it off (its thread, runs
// and history stay); an item off it says why and since when, and goes back with one
// button. A closed item comes back by itself when its issue is reopened.
function renderPlace(feedback) {
  const act = (label, work, className) => button(label, async () => {
    try {
      const item = await work();
      toast(item.archivedAs
        ? `Feedback ${item.id} is off the board (${offTheBoardWords[item.archivedAs].toLowerCase()}); the Off the board filter finds it`
        : `Feedback ${item.id} is back on the board`, { kind: "success" });
      refreshDetail();
    } catch (error) {
      errorToast(error);
    }
  }, className);
  if (feedback.archivedAs) {
    const why = feedback.archivedAs === "closed" ? " Reopening its issue brings it back too." : "";
    return el("section", { class: "off-the-board", dataset: { archivedAs: feedback.archivedAs } }, [
      el("p", { text: `${offTheBoardWords[feedback.archivedAs]} ${relativeTime(feedback.archivedAt)}: off the board, with its history kept.${why}` }),
      act("Put back on the board", () => backend.restoreItem(feedback.id), "button small restore-item"),
    ]);
  }
  const actions = el("div", { class: "item-actions" }, [
    act("Dismiss", () => backend.archiveItem(feedback.id, "dismissed"), "button small quiet dismiss-item"),
    act("Archive", () => backend.archiveItem(feedback.id, "archived"), "button small quiet archive-item"),
  ]);
  if (feedback.status === "CODING") {
    for (const action of actions.children) {
      action.disabled = true;
      action.title = "A run is going: the item stays on the board until it ends";
    }
  }
  return actions;
}

// An item someone else opened on GitHub: its text is untrusted, and the agent runs on it
// only once the owner approves it.
function renderOrigin(feedback, raw) {
  if (!feedback.openedByVisitor) return null;
  const author = feedback.githubIssueAuthor ? `@${feedback.githubIssueAuthor}` : "someone else";
  const banner = el("section", { class: "untrusted-origin", dataset: { approved: String(feedback.approvedAt != null) } }, [
    el("p", {}, [
      el("strong", { text: `Opened on GitHub by ${author}, not by you.` }),
      el("span", { text: " Its text is untrusted: the agent and the PR get it fenced and marked as such." }),
    ]),
  ]);
  if (feedback.approvedAt == null) {
    banner.append(el("div", { class: "update-row" }, [
      button("Approve for the agent", async () => {
        try {
          await backend.approveFeedback(feedback.id);
          toast("Approved: the agent may run on it");
          refreshDetail();
        } catch (error) {
          errorToast(error);
        }
      }, "button primary approve-feedback"),
      el("span", { class: "hint", text: "Read it first: nothing runs until you approve." }),
    ]));
    banner.append(agentGets(raw));
  } else {
    banner.append(el("p", { class: "hint", text: `Approved ${relativeTime(feedback.approvedAt)}.` }));
  }
  return banner;
}

function renderUpdate(detail) {
  const next = detail.nextRun;
  const section = el("section", { class: "update" });
  if (next.kind === "none") {
    section.append(el("p", { class: "muted update-closed", text: next.reason ?? "" }));
    return section;
  }
  updateText ??= el("textarea", {
    class: "update-text",
    attrs: { rows: "3", placeholder: "Tell the agent what to change…", "aria-label": "Instructions for the agent" },
  });
  const text = updateText;
  const go = button(next.label, async () => {
    go.disabled = true;
    try {
      const runId = await backend.startRun(detail.feedback.id, text.value);
      openLogs.add(runId);
      text.value = "";
      toast(`Run ${runId} started`);
      await showDetail(detail.feedback.id);
    } catch (error) {
      errorToast(error);
      go.disabled = false;
    }
  }, "button primary update-button");
  go.disabled = !next.enabled;
  section.append(text, el("div", { class: "update-row" }, [
    go,
    el("span", { class: "hint", text: next.reason ?? (next.kind === "first" ? "Opens a PR from a new branch." : "Adds commits to the same branch and PR.") }),
  ]));
  return section;
}

const originWords = {
  review: "review",
  review_comment: "inline comment",
  check_run: "failing check",
};

function includeButton(entry) {
  return button(entry.candidate ? "Include in the next Update PR" : "Include in the prompt", async () => {
    try {
      await backend.includeFollowUp(entry.id);
      refreshDetail();
    } catch (error) {
      errorToast(error);
    }
  }, "button small include");
}

function threadEntry(entry) {
  const fromOwner = entry.source === "owner";
  const who = entry.automatic
    ? "Handoff, for an automatic update"
    : entry.origin === "check_run"
      ? `check ${entry.author ?? ""}`.trim()
      : fromOwner ? "You" : `@${entry.author ?? "visitor"}`;
  const item = el("li", { class: `thread-entry ${entry.source}`, dataset: { origin: entry.origin, candidate: String(entry.candidate) } }, [
    el("div", { class: "thread-meta" }, [
      el("strong", { text: who }),
      entry.origin !== "thread" ? el("span", { class: "badge", text: originWords[entry.origin] ?? entry.origin }) : null,
      el("span", { class: "muted", text: relativeTime(entry.createdAt) }),
    ]),
    trustedHtml(el("div", { class: "markdown" }), entry.bodyHtml),
  ]);
  if (!fromOwner || entry.candidate) {
    const state = entry.includedInPrompts
      ? el("span", { class: "badge", text: fromOwner ? "in the next Update PR's prompt" : "in the agent's prompt, as untrusted" })
      : includeButton(entry);
    item.append(el("div", { class: "thread-actions" }, [state]));
    if (!entry.includedInPrompts && !fromOwner) item.append(agentGets(entry.bodyRaw));
  }
  return item;
}

function renderThread(detail) {
  const own = detail.thread.filter((entry) => entry.source === "owner" && !entry.candidate);
  const visitors = detail.thread.filter((entry) => entry.source === "visitor" && !entry.candidate);
  const candidates = detail.thread.filter((entry) => entry.candidate);
  const section = el("section", { class: "thread" }, [el("h3", { text: `Follow-ups (${own.length})` })]);
  if (own.length) section.append(el("ol", { class: "thread-list owner-list" }, own.map(threadEntry)));
  else section.append(el("p", { class: "muted", text: "No follow-ups yet." }));
  if (candidates.length) {
    section.append(
      el("h3", { class: "candidates-title", text: `From the PR (${candidates.length})` }),
      el("p", { class: "hint", text: "Reviews, inline comments and failing checks on the PR. None reaches the agent until you include it; anyone's text but yours goes in marked as untrusted." }),
      el("ol", { class: "thread-list candidates" }, candidates.map(threadEntry)),
    );
  }
  if (visitors.length) {
    section.append(
      el("h3", { class: "visitors-title", text: `Visitor comments (${visitors.length}) — untrusted` }),
      el("p", { class: "hint", text: "Never sent to the agent unless you include them; then they are marked as untrusted." }),
      el("ol", { class: "thread-list visitors" }, visitors.map(threadEntry)),
    );
  }
  return section;
}

/**
 * The button that shows and hides a metered run's steps.
 * @param {import("./contract.js").RunRecord} run
 * @param {HTMLElement} steps
 */
function stepsToggle(run, steps) {
  const toggle = button("Show steps", async () => {
    if (!steps.hidden) {
      steps.hidden = true;
      toggle.textContent = "Show steps";
      return;
    }
    try {
      await showSteps(run.id, steps);
      steps.hidden = false;
      toggle.textContent = "Hide steps";
    } catch (error) {
      errorToast(error);
    }
  }, "button small show-steps");
  return toggle;
}

function runRow(run, heldAndPushed = false, lessons = [], queuePlace = null) {
  const active = run.status === "queued" || run.status === "running";
  const when = relativeTime(run.finishedAt ?? run.startedAt ?? run.createdAt);
  const summary = el("div", { class: "run-summary" }, [
    el("span", { class: "run-dot", dataset: { runStatus: run.status } }),
    el("strong", { text: `Run ${run.id}` }),
    el("span", { text: `${run.stage}${run.codeRunKind ? " · " + run.codeRunKind : ""} · ${run.status} on ${run.backend}` }),
    el("span", { class: "muted", text: when }),
    runSpend(run) ? el("span", { class: "muted run-spend", text: runSpend(run) }) : null,
  ]);
  const row = el("li", { class: "run", dataset: { runId: String(run.id), runStatus: run.status } }, [summary]);
  if (run.startedBecause) {
    row.append(el("p", { class: "run-started-because", text: `Started by itself: ${run.startedBecause}.` }));
  }
  if (run.failureMessage) row.append(el("p", { class: "run-failure", text: run.failureMessage }));
  if (run.status === "queued" && queuePlace != null) {
    row.append(el("p", {
      class: "run-queue-place",
      text: queuePlace === 0
        ? "A slot is free: the run is starting."
        : `Waiting in the run queue: place ${queuePlace}. It starts when a slot is free; Cancel takes it out.`,
    }));
  }
  for (const note of run.notes ?? []) row.append(el("p", { class: "run-note", text: `⚠ ${note}` }));
  if (lessons.length) {
    row.append(el("details", { class: "run-lessons" }, [
      el("summary", { text: `Carried ${lessons.length === 1 ? "1 lesson" : `${lessons.length} lessons`} of yours` }),
      el("ul", {}, lessons.map((rule) => el("li", { text: rule }))),
    ]));
  }
  const kept = followedLogs.get(run.id);
  const log = kept ?? el("pre", { class: "run-log", attrs: { "aria-label": `Log of run ${run.id}` } });
  if (!kept) log.hidden = true;
  const actions = el("div", { class: "run-actions" });
  const toggle = button(log.hidden ? "Show log" : "Hide log", () => {
    if (log.hidden) openLog(run.id, log, toggle);
    else {
      log.hidden = true;
      toggle.textContent = "Show log";
      openLogs.delete(run.id);
    }
  }, "button small");
  actions.append(toggle);
  // What the agent paid for, call by call, as the key forwarder measured it.
  const steps = el("div", { class: "run-steps" });
  steps.hidden = true;
  if (run.spendSource === "metered") actions.append(stepsToggle(run, steps));
  if (active) {
    actions.append(button("Cancel", async () => {
      try {
        await backend.cancelRun(run.id);
        toast(`Cancelling run ${run.id}…`);
      } catch (error) {
        errorToast(error);
      }
    }, "button small danger"));
  }
  // A run of a visitor's item whose commits change CI entry points is held: the owner
  // reads exactly what it would push, then pushes it (or does not).
  if (run.failureCode === "ci_change_awaits_approval" && heldAndPushed) {
    row.append(el("p", { class: "run-note held-pushed", text: "✓ Its commits were pushed after your approval." }));
    row.append(actions, steps, log);
  } else if (run.failureCode === "ci_change_awaits_approval") {
    const heldBox = el("div", { class: "held-push" });
    heldBox.hidden = true;
    actions.append(button("Review the held commits…", () => showHeld(run, heldBox), "button small primary review-held"));
    row.append(actions, heldBox, steps, log);
  } else {
    row.append(actions, steps, log);
  }
  if (!kept && (openLogs.has(run.id) || (active && openLogs.size === 0))) openLog(run.id, log, toggle);
  return row;
}

async function showHeld(run, box) {
  let held;
  try {
    held = await backend.heldCommits(run.id);
  } catch (error) {
    errorToast(error);
    return;
  }
  const ci = el("ul", { class: "held-ci" }, held.ciEntryPoints.map((entry) =>
    el("li", {}, [el("code", { text: entry.path }), el("span", { text: ` — ${entry.why}` })])));
  const diff = el("pre", { class: "held-diff", attrs: { "aria-label": `The commits of run ${run.id}` } });
  diff.textContent = held.diff;
  const push = button(held.commits === 1 ? "Push this commit" : `Push these ${held.commits} commits`, async () => {
    push.disabled = true;
    try {
      const pushed = await backend.pushHeldRun(run.id, held.endSha);
      toast(`Pushed: PR #${pushed.prNumber}`, { kind: "success" });
      box.hidden = true;
      refreshDetail();
    } catch (error) {
      push.disabled = false;
      errorToast(error);
    }
  }, "button danger push-held");
  box.replaceChildren(
    el("p", { class: "hint", text: `These commits for ${held.branch} change files that decide what CI runs with the repository's secrets. Read them: only these commits (up to ${held.endSha.slice(0, 12)}) are pushed.` }),
    ci,
    el("details", {}, [el("summary", { text: `Every file they change (${held.changedPaths.length})` }), el("ul", {}, held.changedPaths.map((path) => el("li", { text: path })))]),
    diff,
    el("div", { class: "update-row" }, [push, button("Not now", () => { box.hidden = true; }, "button quiet")]),
  );
  box.hidden = false;
}

function openLog(runId, log, toggle) {
  openLogs.add(runId);
  log.hidden = false;
  toggle.textContent = "Hide log";
  if (followedLogs.has(runId)) return;
  followedLogs.set(runId, log);
  followLogInto(runId, log);
}

const automaticDecisionWords = {
  pending: "Waiting",
  started: "Update PR started",
  skipped: "Skipped",
  stopped: "Stopped",
};

// Failing checks and requested changes that asked for an automatic update, and what
// became of each: the newest first, a stop standing out (the owner decides what next).
function renderAutomaticUpdates(detail) {
  const updates = detail.automaticUpdates ?? [];
  if (updates.length === 0) return null;
  const stopped = updates.some((update) => update.decision === "stopped");
  const section = el("section", { class: "automatic-updates", dataset: { stopped: String(stopped) } }, [
    el("h3", { text: `Automatic updates (${updates.length})` }),
  ]);
  if (stopped) {
    section.append(el("p", { class: "automatic-stopped", text: "A check failed the same way after an automatic update, so Handoff stopped trying it: look at it yourself, then Update PR with what to do." }));
  }
  section.append(el("ol", { class: "automatic-list" }, [...updates].reverse().map((update) => el("li", {
    class: "automatic-update",
    dataset: { decision: update.decision, trigger: update.trigger },
  }, [
    el("strong", { text: automaticDecisionWords[update.decision] ?? update.decision }),
    el("span", { text: ` ${update.reason ?? `${update.trigger === "check_failed" ? `the check "${update.subject}" failed` : `@${update.subject} requested changes`}; waits for the running run to end`}` }),
    el("span", { class: "muted", text: ` · ${relativeTime(update.createdAt)}` }),
  ]))));
  return section;
}

function renderRuns(detail) {
  const section = el("section", { class: "runs" }, [el("h3", { text: `Runs (${detail.runs.length})` })]);
  if (detail.runs.length === 0) section.append(el("p", { class: "muted", text: "No run yet." }));
  else section.append(el("ol", { class: "run-list" }, detail.runs.map((run) => runRow(
    run,
    detail.pushedHeldRuns.includes(run.id),
    detail.runLessons.find((carried) => carried.runId === run.id)?.rules ?? [],
    detail.queuePlaces.find((queued) => queued.runId === run.id)?.place ?? null,
  ))));
  return section;
}

function renderComments(detail) {
  const feedback = detail.feedback;
  const section = el("section", { class: "comments" }, [el("h3", { text: "On the PR" })]);
  if (feedback.prNumber != null) {
    section.append(el("div", { class: "update-row" }, [
      button("Open the PR workspace", () => document.dispatchEvent(new CustomEvent("open-workspace", {
        detail: { repo: `${feedback.repo.owner}/${feedback.repo.name}`, number: feedback.prNumber },
      })), "button small primary open-pr-workspace"),
      el("span", { class: "hint", text: "Review, plan, test and fix, with each comment as an editable pane." }),
    ]));
  }
  if (!detail.comments.length) {
    section.append(el("p", { class: "muted", text: feedback.prNumber == null ? "No PR yet." : "No Handoff comment on the PR yet." }));
    return section;
  }
  for (const comment of detail.comments) {
    const edited = comment.origin !== "agent";
    const byOther = comment.writtenBy.startsWith("@") || comment.writtenBy.startsWith("someone");
    const badgeText = !edited ? `AI · v${comment.version}` : byOther ? `edited by ${comment.writtenBy} · v${comment.version}` : `edited · v${comment.version}`;
    section.append(el("article", { class: "managed-comment", dataset: { kind: comment.kind, awaitsApproval: String(comment.awaitsApproval) } }, [
      el("header", {}, [
        el("strong", { text: commentLabels[comment.kind] ?? comment.kind }),
        el("span", { class: `badge ${edited ? "edited" : ""} ${comment.awaitsApproval ? "warning" : ""}`, text: badgeText }),
        comment.missing ? el("span", { class: "badge warning", text: "deleted on GitHub" }) : null,
        comment.awaitsApproval
          ? button("Approve for the next stage", async () => {
              try {
                await backend.approveCommentVersion(comment.versionId);
                toast(`Version ${comment.version} approved: the next stage may read it`);
                refreshDetail();
              } catch (error) {
                errorToast(error);
              }
            }, "button small approve-version")
          : null,
        comment.kind !== "followups"
          ? button("Edit in the PR workspace", () => document.dispatchEvent(new CustomEvent("open-workspace", {
              detail: { repo: `${feedback.repo.owner}/${feedback.repo.name}`, number: feedback.prNumber },
            })), "button small open-workspace")
          : null,
      ]),
      comment.awaitsApproval
        ? el("p", { class: "hint approval-hint", text: `Edited on GitHub by ${comment.writtenBy}, not by you: no stage reads it until you approve this version.` })
        : null,
      trustedHtml(el("div", { class: "markdown comment-body" }), comment.contentHtml),
      comment.awaitsApproval ? agentGets(comment.contentRaw) : null,
    ]));
  }
  return section;
}
