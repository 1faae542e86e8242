// Renders the dashboard: one column per status, one card per feedback item. Every piece
// of text from the store goes in through textContent, never as markup.

import { money, plural, relativeTime, runStatusWords } from "./format.js";

const columnTemplate = document.getElementById("column-template");
const cardTemplate = document.getElementById("card-template");

function cardElement(card, actions) {
  const element = cardTemplate.content.firstElementChild.cloneNode(true);
  element.dataset.feedbackId = String(card.feedback_id);
  element.dataset.status = card.status;
  element.querySelector(".card-title").textContent = card.title;
  element.querySelector(".card-repo").textContent = card.repo;

  const prLink = element.querySelector(".pr-link");
  if (card.pr_number != null) {
    prLink.hidden = false;
    const state = card.pr_state ?? "open";
    prLink.textContent = `#${card.pr_number} ${state}`;
    prLink.dataset.prState = state;
    prLink.title = card.pr_url ?? "";
    prLink.addEventListener("click", (event) => {
      event.stopPropagation();
      actions.openPullRequest(card.feedback_id);
    });
  } else {
    element.querySelector(".no-pr").hidden = false;
  }

  const followUps = element.querySelector(".follow-ups");
  const count = card.owner_follow_up_count + card.visitor_follow_up_count;
  followUps.textContent = plural(count, "follow-up");
  followUps.title =
    card.visitor_follow_up_count > 0
      ? `${card.owner_follow_up_count} from you, ${card.visitor_follow_up_count} from visitors (untrusted)`
      : `${card.owner_follow_up_count} from you`;
  if (card.visitor_follow_up_count > 0) followUps.classList.add("has-visitor");

  const cost = element.querySelector(".cost");
  if (card.total_cost_usd > 0) {
    cost.hidden = false;
    cost.textContent = money(card.total_cost_usd);
    cost.title = `LLM cost of ${plural(card.run_count, "run")}`;
  }

  const lastRun = element.querySelector(".last-run");
  if (card.last_run) {
    const run = card.last_run;
    const when = relativeTime(run.finished_at ?? run.started_at);
    lastRun.dataset.runStatus = run.status;
    lastRun.textContent = `Run ${run.id} · ${run.stage} · ${runStatusWords[run.status] ?? run.status}${when ? ` · ${when}` : ""}`;
  } else {
    lastRun.textContent = `Created ${relativeTime(card.created_at)}`;
  }
  const open = () => actions.openDetail(card.feedback_id);
  element.addEventListener("click", open);
  element.addEventListener("keydown", (event) => {
    if (event.key === "Enter") open();
  });
  if (actions.selected === card.feedback_id) element.classList.add("selected");
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
