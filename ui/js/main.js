// Wires the dashboard: loads it, reloads on filter input and whenever the mirror
// changes (this app, the `handoff` CLI or a sync), and shows coded errors plainly.

import { backend } from "./backend.js";
import { renderBoard } from "./board.js";
import { plural } from "./format.js";

const board = document.getElementById("board");
const summary = document.getElementById("summary");
const empty = document.getElementById("empty");
const search = document.getElementById("search");
const repoFilter = document.getElementById("repo-filter");
const statusFilter = document.getElementById("status-filter");
const notice = document.getElementById("notice");

const noticeTitles = {
  database_damaged: "The database is damaged",
  database_from_newer_version: "This database is from a newer Handoff",
  data_folder: "Handoff has no data folder",
  not_found: "Not found",
};

let appInfo = null;
let loadGeneration = 0;

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

const actions = {
  async openPullRequest(feedbackId) {
    try {
      await backend.openPullRequest(feedbackId);
    } catch (error) {
      showNotice(error);
    }
  },
};

async function loadRepos() {
  const repos = await backend.repos();
  const chosen = repoFilter.value;
  const options = [new Option("All repositories", "")];
  for (const repo of repos) {
    const name = `${repo.name.owner}/${repo.name.name}`;
    options.push(new Option(name, name));
  }
  repoFilter.replaceChildren(...options);
  repoFilter.value = repos.some((repo) => `${repo.name.owner}/${repo.name.name}` === chosen) ? chosen : "";
}

async function loadDashboard() {
  const generation = ++loadGeneration;
  const query = { repo: repoFilter.value, status: statusFilter.value, search: search.value };
  const dashboard = await backend.dashboard(query);
  if (generation !== loadGeneration) return; // a newer load is on its way
  hideNotice();
  const filtering = Boolean(query.repo || query.status || query.search.trim());
  empty.hidden = dashboard.total > 0 || filtering;
  board.hidden = dashboard.total === 0 && !filtering;
  summary.textContent = filtering
    ? `${plural(dashboard.total, "item")} match`
    : plural(dashboard.total, "item");
  renderBoard(board, dashboard, { onlyStatus: query.status, actions });
  document.body.dataset.loaded = "true";
}

async function reload() {
  try {
    await loadRepos();
    await loadDashboard();
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

backend.onMirrorChanged(() => reload());

backend
  .appInfo()
  .then((info) => {
    appInfo = info;
  })
  .finally(reload);
