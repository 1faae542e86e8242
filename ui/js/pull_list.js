// @ts-check
// The list of pull requests: every open PR of the connected repositories as the last
// sync mirrored it, with its author, branch, last update and checks; a filter and a
// search. A row opens the PR's workspace.

import { backend } from "./backend.js";
import { el } from "./dom.js";
import { relativeTime, plural } from "./format.js";

const list = document.getElementById("pull-list");
const empty = document.getElementById("pulls-empty");
const summary = document.getElementById("pulls-summary");
const search = document.getElementById("pulls-search");
const repoFilter = document.getElementById("pulls-repo");
const checksFilter = document.getElementById("pulls-checks");
const originFilter = document.getElementById("pulls-origin");

const checkWords = { success: "checks pass", failure: "checks fail", pending: "checks running", none: "no checks" };
let generation = 0;
let openPull = () => {};

export function configurePullList(open) {
  openPull = open;
}

export function setPullRepos(repos) {
  const chosen = repoFilter.value;
  repoFilter.replaceChildren(new Option("All repositories", ""), ...repos.map((name) => new Option(name, name)));
  repoFilter.value = repos.includes(chosen) ? chosen : "";
}

function row(pull) {
  const item = el("li", {
    class: "pull-row",
    dataset: { repo: pull.repoFullName, number: String(pull.number), checks: pull.checks },
  }, [
    el("div", { class: "pull-title-row" }, [
      el("span", { class: "pull-number mono", text: `#${pull.number}` }),
      // The title is the row's button: Enter and Space open the workspace.
      el("button", {
        type: "button",
        class: "pull-open",
        attrs: { "aria-label": `#${pull.number} ${pull.title}: open its workspace` },
      }, [el("strong", { class: "pull-title", text: pull.title })]),
      pull.draft ? el("span", { class: "badge", text: "draft" }) : null,
      pull.feedbackId != null ? el("span", { class: "badge edited", text: "feedback" }) : null,
      pull.fromFork ? el("span", { class: "badge", text: "fork" }) : null,
    ]),
    el("div", { class: "pull-facts" }, [
      el("span", { class: "mono", text: pull.repoFullName }),
      el("span", { class: "mono", text: `${pull.headRef} → ${pull.baseRef}` }),
      el("span", { text: pull.authorLogin ? `by @${pull.authorLogin}` : "by someone" }),
      el("span", { class: "muted", text: `updated ${relativeTime(pull.githubUpdatedAt)}` }),
      pull.checksUnreadable
        ? el("span", { class: "check-pill", dataset: { checks: "unreadable" }, text: "checks not readable with this token", title: "The signed-in token may not read this repository's checks: Settings → Check setup says which permission to add." })
        : el("span", { class: "check-pill", dataset: { checks: pull.checks }, text: checkWords[pull.checks] ?? pull.checks }),
    ]),
  ]);
  const open = () => openPull(pull.repoFullName, pull.number);
  item.addEventListener("click", open);
  return item;
}

export async function loadPullList() {
  const mine = ++generation;
  const query = { repo: repoFilter.value, search: search.value, checks: checksFilter.value, origin: originFilter.value };
  const pulls = await backend.pullRequestList(query);
  if (mine !== generation) return;
  const filtering = Boolean(query.repo || query.search.trim() || query.checks || query.origin);
  summary.textContent = filtering ? `${plural(pulls.length, "pull request")} match` : plural(pulls.length, "open pull request");
  list.replaceChildren(...pulls.map(row));
  empty.hidden = pulls.length > 0;
  empty.textContent = filtering
    ? "No open pull request matches."
    : "No open pull request is known yet: Sync reads them from GitHub.";
  document.body.dataset.pullsLoaded = "true";
}

let timer = null;
search.addEventListener("input", () => {
  clearTimeout(timer);
  timer = setTimeout(() => loadPullList(), 150);
});
for (const select of [repoFilter, checksFilter, originFilter]) select.addEventListener("change", () => loadPullList());
document.getElementById("pulls-filters").addEventListener("submit", (event) => event.preventDefault());
