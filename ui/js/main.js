// @ts-check
// Wires the app: the views (the feedback board with its detail panel, the list of pull
// requests, a PR's workspace), reloaded whenever the mirror changes; the forms, the
// session, the outbox, and run events as toasts and notifications that open what they
// are about.

import { backend } from "./backend.js";
import { renderBoard } from "./board.js";
import { plural } from "./format.js";
import { showDetail, refreshDetail, shownFeedback, closeDetail, detailShows } from "./detail.js";
import { openNewFeedback } from "./dialogs.js";
import { openSignIn } from "./sign_in.js";
import { openSettings, configureSettings, openLessons } from "./settings.js";
import { renderFirstSteps } from "./first_steps.js";
import { toast, errorToast, setErrorActions } from "./toasts.js";
import { configureFixActions } from "./fix_actions.js";
import { loadPullList, configurePullList, setPullRepos } from "./pull_list.js";
import { openWorkspace, refreshWorkspace, shownWorkspace, closeWorkspace, configureWorkspace, workspaceShows } from "./workspace.js";
import { refreshOutboxButton, configureOutbox } from "./outbox.js";
import { refreshLessons } from "./lessons.js";
import { configureBulkRuns, keepPickedOn } from "./bulk_runs.js";
import { followDaemon } from "./daemon_chip.js";

const board = document.getElementById("board");
const summary = document.getElementById("summary");
const empty = document.getElementById("empty");
const search = document.getElementById("search");
const repoFilter = document.getElementById("repo-filter");
const statusFilter = document.getElementById("status-filter");
const notice = document.getElementById("notice");
const sessionButton = document.getElementById("session");

const noticeTitles = {
  database_damaged: "The database is damaged",
  database_locked: "Another program holds the database",
  database_from_newer_version: "This database is from a newer Handoff",
  data_folder: "Handoff has no data folder",
  not_found: "Not found",
};

let appInfo = null;
let loadGeneration = 0;
let session = { signedIn: false };
const accountMenu = document.getElementById("account-menu");

function showNotice(error) {
  notice.hidden = false;
  document.getElementById("notice-title").textContent = noticeTitles[error.code] ?? "Something went wrong";
  document.getElementById("notice-message").textContent = error.message;
  document.getElementById("notice-detail").textContent =
    appInfo && error.code.startsWith("database") ? `Data folder: ${appInfo.dataDir}` : "";
  notice.dataset.code = error.code;
}

function hideNotice() {
  notice.hidden = true;
}

const views = {
  feedback: document.getElementById("feedback-view"),
  pulls: document.getElementById("pulls-view"),
  workspace: document.getElementById("pr-workspace"),
};

// Which view the main area shows: the feedback board, the list of PRs, or one PR's
// workspace. The tabs mark the feedback board or the PRs (a workspace is under PRs).
function showView(name) {
  for (const [key, element] of Object.entries(views)) element.hidden = key !== name;
  document.body.dataset.view = name;
  for (const tab of document.querySelectorAll(".view-tab")) {
    const current = tab.dataset.view === name || (name === "workspace" && tab.dataset.view === "pulls");
    if (current) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
  if (name !== "workspace") closeWorkspace();
}

function openPullRequestWorkspace(repo, number) {
  showView("workspace");
  closeDetail();
  return openWorkspace(repo, number);
}

function showFeedbackItem(feedbackId) {
  showView("feedback");
  actions.openDetail(feedbackId);
}

const actions = {
  selected: null,
  async openPullRequest(feedbackId) {
    try {
      await backend.openPullRequest(feedbackId);
    } catch (error) {
      errorToast(error);
    }
  },
  openDetail(feedbackId) {
    actions.selected = feedbackId;
    showDetail(feedbackId).then(() => loadDashboard().catch(showNotice));
  },
};

async function loadRepos() {
  const repos = await backend.repos();
  setPullRepos(repos.map((repo) => `${repo.name.owner}/${repo.name.name}`));
  const chosen = repoFilter.value;
  const options = [new Option("All repositories", "")];
  for (const repo of repos) {
    const name = `${repo.name.owner}/${repo.name.name}`;
    options.push(new Option(name, name));
  }
  repoFilter.replaceChildren(...options);
  repoFilter.value = repos.some((repo) => `${repo.name.owner}/${repo.name.name}` === chosen) ? chosen : "";
}

// Each column first gets this many of its most recently changed cards, and this many
// more each time its end scrolls into view.
const CARDS_PER_STEP = 60;
let cardsPerColumn = CARDS_PER_STEP;
let lastFilter = "";
let moreAsked = false;
actions.showMore = () => {
  if (moreAsked) return;
  moreAsked = true;
  cardsPerColumn += CARDS_PER_STEP;
  loadDashboard().catch(showNotice).finally(() => { moreAsked = false; });
};

async function loadDashboard() {
  const generation = ++loadGeneration;
  const started = performance.now();
  const filter = JSON.stringify([repoFilter.value, statusFilter.value, search.value]);
  if (filter !== lastFilter) {
    lastFilter = filter;
    cardsPerColumn = CARDS_PER_STEP;
  }
  // "Off the board" shows the closed, dismissed and archived items, in their columns.
  const archived = statusFilter.value === "archived";
  const query = {
    repo: repoFilter.value,
    status: archived ? "" : statusFilter.value,
    search: search.value,
    cardsPerColumn,
    archived,
  };
  const dashboard = await backend.dashboard(query);
  if (generation !== loadGeneration) return; // a newer load is on its way
  hideNotice();
  const filtering = Boolean(query.repo || query.status || query.archived || query.search.trim());
  empty.hidden = dashboard.total > 0 || filtering;
  if (!empty.hidden) renderFirstSteps(session, firstStepActions);
  board.hidden = dashboard.total === 0 && !filtering;
  summary.textContent = filtering
    ? `${plural(dashboard.total, "item")} match`
    : plural(dashboard.total, "item");
  actions.selected = shownFeedback();
  keepPickedOn(dashboard);
  actions.showingOffTheBoard = query.archived;
  renderBoard(board, dashboard, { onlyStatus: query.status, actions });
  // How long the store's answer and the drawing took: up to the drawn DOM, and laid out
  // and painted (the next task after the next frame). The benchmark of a large board
  // reads both.
  board.dataset.drawMs = (performance.now() - started).toFixed(1);
  requestAnimationFrame(() => setTimeout(() => {
    board.dataset.loadMs = (performance.now() - started).toFixed(1);
    board.dataset.loads = String(Number(board.dataset.loads ?? 0) + 1);
  }, 0));
  document.body.dataset.loaded = "true";
  sayFirstPaint();
}

// Once the first board is on screen (two frames later), the log says how long the app
// took to get there.
let firstPaintSaid = false;
function sayFirstPaint() {
  if (firstPaintSaid) return;
  firstPaintSaid = true;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => backend.windowPainted().catch(errorToast)),
  );
}

async function loadSession() {
  try {
    session = await backend.sessionStatus();
  } catch (error) {
    session = { signedIn: false };
  }
  sessionButton.textContent = session.signedIn ? `@${session.login ?? "signed in"}` : "Sign in to GitHub";
  sessionButton.dataset.signedIn = String(Boolean(session.signedIn));
  sessionButton.title = session.signedIn ? `Signed in to ${session.apiBase}` : "Sign in to GitHub";
  document.getElementById("account-who").textContent = session.signedIn
    ? `Signed in as @${session.login ?? "?"} at ${session.apiBase}`
    : "";
  const tokenWarning = document.getElementById("account-token-warning");
  tokenWarning.textContent = session.signedIn && session.tokenWarning ? `Note: ${session.tokenWarning}.` : "";
  tokenWarning.hidden = !tokenWarning.textContent;
  accountMenu.hidden = true;
  if (!empty.hidden) renderFirstSteps(session, firstStepActions);
}

function signIn() {
  openSignIn(session, () => loadSession().then(reload));
}

const firstStepActions = {
  signIn,
  connect: () => openSettings("repositories"),
  checkSetup: () => openSettings("setup"),
  newFeedback: () => openNewFeedback((feedback) => actions.openDetail(feedback.id)).catch(errorToast),
  sync: () => document.getElementById("sync-now").click(),
};

configureBulkRuns(actions, {
  redraw: () => loadDashboard().catch(showNotice),
  repoShown: () => repoFilter.value,
});
configureSettings({ signIn, changed: () => loadSession().then(reload) });
configureFixActions({
  openSettings,
  signIn,
  openDetail: (feedbackId) => actions.openDetail(feedbackId),
  sync: () => document.getElementById("sync-now").click(),
});
configurePullList(openPullRequestWorkspace);
configureWorkspace({
  back: () => {
    showView("pulls");
    loadPullList().catch(errorToast);
  },
  openFeedback: showFeedbackItem,
});
configureOutbox(() => reload());
for (const tab of document.querySelectorAll(".view-tab")) {
  tab.addEventListener("click", () => {
    showView(tab.dataset.view);
    if (tab.dataset.view === "pulls") loadPullList().catch(errorToast);
  });
}
setErrorActions({
  setup_incomplete: { label: "Check setup", run: () => openSettings("setup") },
  github_auth: { label: "Sign in", run: signIn },
  budget_spent: { label: "Budgets", run: () => openSettings("spend") },
});

async function reload() {
  try {
    await loadRepos();
    await loadDashboard();
    refreshDetail();
    if (document.body.dataset.view === "pulls") await loadPullList();
    if (document.body.dataset.view === "workspace") refreshWorkspace();
    refreshOutboxButton();
  } catch (error) {
    showNotice(error);
    document.body.dataset.loaded = "error";
  }
}

let searchTimer = null;
search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => loadDashboard().catch(showNotice), 150);
});
repoFilter.addEventListener("change", () => loadDashboard().catch(showNotice));
statusFilter.addEventListener("change", () => loadDashboard().catch(showNotice));
document.getElementById("filters").addEventListener("submit", (event) => event.preventDefault());
document.getElementById("new-feedback").addEventListener("click", () =>
  openNewFeedback((feedback) => actions.openDetail(feedback.id)).catch(errorToast));
document.getElementById("sync-now").addEventListener("click", async (event) => {
  const syncButton = event.currentTarget;
  syncButton.disabled = true;
  try {
    const report = await backend.syncNow();
    toast(`Synced: ${report.newFeedback} new feedback, ${report.statusChanges} status changes`, { kind: "success" });
    // What the sync decided about failing checks, each with why.
    for (const note of report.automaticUpdates) {
      const words = { started: "Automatic update started", stopped: "Automatic updates stopped", skipped: "Automatic update skipped", pending: "Automatic update waits" };
      toast(`${words[note.decision] ?? note.decision} (feedback ${note.feedbackId}): ${note.reason}`, {
        kind: note.decision === "stopped" ? "error" : "info",
        action: { label: "Open", run: () => actions.openDetail(note.feedbackId) },
        timeout: 12000,
      });
    }
    reload();
  } catch (error) {
    if (error.code === "github_auth") signIn();
    else errorToast(error);
  } finally {
    syncButton.disabled = false;
  }
});
sessionButton.addEventListener("click", () => {
  if (!session.signedIn) signIn();
  else accountMenu.hidden = !accountMenu.hidden;
});
document.getElementById("sign-out").addEventListener("click", async () => {
  try {
    await backend.signOut();
    toast("Signed out: the token is gone from the keyring");
  } catch (error) {
    errorToast(error);
  }
  await loadSession();
  reload();
});
document.getElementById("open-settings").addEventListener("click", () => openSettings("repositories"));
document.addEventListener("click", (event) => {
  if (!accountMenu.hidden && !event.target.closest?.(".account")) accountMenu.hidden = true;
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !document.querySelector("dialog[open]")) closeDetail();
});

// Keyboard shortcuts for the common actions, listed in the shortcuts dialog (`?`). None
// acts while a field has the keyboard, a dialog is open, or a modifier is held.
const shortcutsDialog = document.getElementById("shortcuts-dialog");
document.getElementById("open-shortcuts").addEventListener("click", () => shortcutsDialog.showModal());
document.getElementById("shortcuts-close").addEventListener("click", () => shortcutsDialog.close());

// The card `step` places after (or before) the one open or with the keyboard, opened.
function moveToCard(step) {
  showView("feedback");
  const cards = [...document.querySelectorAll("#board .card")];
  if (cards.length === 0) return;
  const open = shownFeedback();
  const focused = document.activeElement?.closest?.(".card");
  const current = focused ?? cards.find((card) => Number(card.dataset.feedbackId) === open);
  const index = current ? cards.indexOf(current) : -1;
  const next = cards[Math.min(cards.length - 1, Math.max(0, index + step))];
  next.querySelector(".card-open").focus();
  showFeedbackItem(Number(next.dataset.feedbackId));
}

const shortcuts = {
  n: () => document.getElementById("new-feedback").click(),
  s: () => document.getElementById("sync-now").click(),
  "/": () => {
    showView("feedback");
    document.getElementById("search").focus();
  },
  j: () => moveToCard(1),
  k: () => moveToCard(-1),
  r: () => {
    const run = document.querySelector("#detail:not([hidden]) .update-button:not(:disabled)");
    if (run) run.click();
    else toast("Open a card whose agent can run first (j and k move between cards).");
  },
  "?": () => shortcutsDialog.showModal(),
};
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  const typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement
    || target instanceof HTMLSelectElement || (target instanceof HTMLElement && target.isContentEditable);
  if (typing || document.querySelector("dialog[open]")) return;
  const action = shortcuts[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});
document.addEventListener("open-workspace", (event) => openPullRequestWorkspace(event.detail.repo, event.detail.number));

// Links in rendered markdown open in the browser, never in the app's window.
document.addEventListener("click", (event) => {
  const link = event.target.closest?.("a[href]");
  if (!link) return;
  event.preventDefault();
  backend.openLink(link.href).catch(errorToast);
});

// The mirror changed (this window, the command line or a sync): only what the change
// touches is asked for again, and on the board only the cards whose data differ are
// drawn again. A run's heartbeat or log line sends no event at all.
backend.onMirrorChanged((changes) => refreshWhatChanged(changes));
async function refreshWhatChanged(changed) {
  refreshLessons(changed ?? { everything: true, runIds: [] });
  if (!changed || changed.everything) {
    await reload();
    return;
  }
  try {
    if (changed.feedbackIds.length) await loadDashboard();
    if (detailShows(changed.feedbackIds, changed.pullRequests)) refreshDetail();
    if (changed.pullRequests.length) {
      if (document.body.dataset.view === "pulls") await loadPullList();
      if (document.body.dataset.view === "workspace" && workspaceShows(changed.pullRequests)) refreshWorkspace();
    }
    if (changed.outbox) refreshOutboxButton();
  } catch (error) {
    showNotice(error);
  }
}
// When reading the database fails, the window says it no longer shows changes as they
// happen (and why) until the watch is open again; then it draws everything again.
backend.onMirrorFollowing((state) => {
  const banner = document.getElementById("following-lost");
  if (state.following) {
    banner.hidden = true;
    banner.textContent = "";
    return;
  }
  const retry = state.retryInSeconds ? ` Trying again in ${state.retryInSeconds} s.` : "";
  banner.textContent =
    `This window no longer shows changes as they happen: ${state.problem ?? "the database could not be read"}.${retry}`;
  banner.hidden = false;
});
backend.onSecondLaunch(() => toast("Handoff is already open: here it is."));
// What a notification (or its toast) opens: a PR's workspace or a feedback item.
function openTarget(target) {
  if (target?.kind === "pull_request") openPullRequestWorkspace(target.repo, target.number);
  else if (target?.kind === "feedback") showFeedbackItem(target.id);
  else if (target?.kind === "lessons") openLessons(target.repo).catch(errorToast);
}

backend.onRunEvent((notice) => {
  const kind = notice.kind === "run_failed" ? "error" : "success";
  toast(notice.message, {
    kind,
    action: notice.target ? { label: "Open", run: () => openTarget(notice.target) } : null,
    timeout: 12000,
  });
});
backend.onOpenTarget(openTarget);

backend
  .appInfo()
  .then((info) => {
    appInfo = info;
  })
  .finally(() => {
    showView("feedback");
    loadSession();
    reload();
    followDaemon();
  });
