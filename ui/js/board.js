// Renders the dashboard: one column per status, one card per feedback item. Every piece
// of text from the store goes in through textContent, never as markup.

import { money, plural, relativeTime, runStatusWords } from "./format.js";

const columnTemplate = document.getElementById("column-template");
const cardTemplate = document.getElementById("card-template");

function cardElement(card, actions) {
  const element = cardTemplate.content.firstElementChild.cloneNode(true);
  element.dataset.feedbackId = String(card.feedbackId);
  element.dataset.status = card.status;
  element.querySelector(".card-title").textContent = card.title;
  element.querySelector(".card-repo").textContent = card.repo;

  const prLink = element.querySelector(".pr-link");
  if (card.prNumber != null) {
    prLink.hidden = false;
    const state = card.prState ?? "open";
    prLink.textContent = `#${card.prNumber} ${state}`;
    prLink.dataset.prState = state;
    prLink.title = card.prUrl ?? "";
    prLink.addEventListener("click", (event) => {
      event.stopPropagation();
      actions.openPullRequest(card.feedbackId);
    });
  } else {
    element.querySelector(".no-pr").hidden = false;
  }

  const followUps = element.querySelector(".follow-ups");
  const count = card.ownerFollowUpCount + card.visitorFollowUpCount;
  followUps.textContent = plural(count, "follow-up");
  followUps.title =
    card.visitorFollowUpCount > 0
      ? `${card.ownerFollowUpCount} from you, ${card.visitorFollowUpCount} from visitors (untrusted)`
      : `${card.ownerFollowUpCount} from you`;
  if (card.visitorFollowUpCount > 0) followUps.classList.add("has-visitor");

  const cost = element.querySelector(".cost");
  if (card.totalCostUsd > 0) {
    cost.hidden = false;
    cost.textContent = money(card.totalCostUsd);
    cost.title = `LLM cost of ${plural(card.runCount, "run")}`;
  }

  const lastRun = element.querySelector(".last-run");
  if (card.lastRun) {
    const run = card.lastRun;
    const when = relativeTime(run.finishedAt ?? run.startedAt);
    lastRun.dataset.runStatus = run.status;
    lastRun.textContent = `Run ${run.id} · ${run.stage} · ${runStatusWords[run.status] ?? run.status}${when ? ` · ${when}` : ""}`;
  } else {
    lastRun.textContent = `Created ${relativeTime(card.createdAt)}`;
  }
  const open = () => actions.openDetail(card.feedbackId);
  element.addEventListener("click", open);
  element.addEventListener("keydown", (event) => {
    if (event.key === "Enter") open();
  });
  if (actions.selected === card.feedbackId) element.classList.add("selected");
  return element;
}

function columnElement(group, actions) {
  const element = columnTemplate.content.firstElementChild.cloneNode(true);
  element.dataset.status = group.status;
  element.querySelector(".column-title").textContent = group.label;
  element.querySelector(".column-count").textContent = String(group.cards.length);
  const list = element.querySelector(".cards");
  for (const card of group.cards) {
    list.append(cardElement(card, actions));
  }
  element.querySelector(".column-empty").hidden = group.cards.length > 0;
  return element;
}

export function renderBoard(board, dashboard, { onlyStatus, actions }) {
  const columns = dashboard.groups
    .filter((group) => !onlyStatus || group.status === onlyStatus)
    .map((group) => columnElement(group, actions));
  board.replaceChildren(...columns);
  board.classList.toggle("single", Boolean(onlyStatus));
}
