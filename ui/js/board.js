// @ts-check
// Renders the dashboard: one column per status, one card per feedback item. Every piece
// of text from the store goes in through textContent, never as markup.
//
// Drawing again keeps what did not change: a card whose data are the same keeps its
// element (only changed cards are built anew), a column keeps its element, and a list
// is refilled only when its cards or their order changed. The board counts the cards it
// built (`data-cards-drawn`), so the tests can see that a heartbeat draws none. Times
// ("5 min ago") are brought up to date by a clock once a minute, in place.
//
// A NEW or FAILED card has a box to pick it for a run of several items at once; a card
// whose run waits in the run queue says its place, and one whose run went to another
// sandbox than its repository's says where.
//
// A column gets only its most recently changed cards at first, and more once its end is
// scrolled into view: a board of ten thousand items draws a few hundred cards.

import { el } from "./dom.js";
import { backendNames, money, plural, relativeTime, runStatusWords } from "./format.js";

const columnTemplate = document.getElementById("column-template");
// The statuses whose items a plain run (no new instructions) takes.
const RUNNABLE_STATUSES = new Set(["NEW", "FAILED"]);
const cardTemplate = document.getElementById("card-template");

// The cards on the board by feedback id: the data they were drawn from, and the element.
const drawnCards = new Map();
// The columns on the board by status.
const drawnColumns = new Map();
let cardsDrawn = 0;

// A time as a span that the minute clock keeps up to date.
function timeSpan(isoText, prefix = "") {
  const span = document.createElement("span");
  span.className = "when";
  span.dataset.time = isoText ?? "";
  span.dataset.prefix = prefix;
  span.textContent = prefix + relativeTime(isoText);
  return span;
}

setInterval(() => {
  for (const span of document.querySelectorAll("#board .when[data-time]")) {
    span.textContent = span.dataset.prefix + relativeTime(span.dataset.time);
  }
}, 60_000);

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

  const pick = element.querySelector(".card-pick");
  if (actions.picked && RUNNABLE_STATUSES.has(card.status) && !card.archivedAs) {
    pick.hidden = false;
    const box = pick.querySelector("input");
    box.checked = actions.picked.has(card.feedbackId);
    box.setAttribute("aria-label", `Pick "${card.title}" for a run`);
    pick.addEventListener("click", (event) => event.stopPropagation());
    box.addEventListener("change", () => actions.pick(card.feedbackId, box.checked));
  }

  if (card.archivedAs) {
    const badge = element.querySelector(".archived-badge");
    badge.hidden = false;
    badge.textContent = { closed: "Closed on GitHub", dismissed: "Dismissed", archived: "Archived" }[card.archivedAs];
  }

  if (card.conflictsWithBase) element.querySelector(".conflict-badge").hidden = false;
  // Said plainly: the agent's code runs in CI with the repository's secrets.
  if (card.ciRunsWithSecrets) element.querySelector(".secrets-badge").hidden = false;

  showLastRun(element, card);
  // The card's title is its button (Enter and Space open it, and a screen reader says
  // what it opens); a click anywhere else on the card opens it too.
  const open = () => actions.openDetail(card.feedbackId);
  element.addEventListener("click", open);
  element.querySelector(".card-open").setAttribute("aria-label", `${card.title}: open its details`);
  if (actions.selected === card.feedbackId) element.classList.add("selected");
  return element;
}

/**
 * A card's place in the run queue and its last run: which, where, and when.
 * @param {HTMLElement} element
 * @param {import("./contract.js").BoardCard} card
 */
function showLastRun(element, card) {
  const place = card.lastRun?.status === "queued" ? card.lastRun.queuePlace : null;
  if (place != null) {
    const badge = element.querySelector(".queue-place");
    badge.hidden = false;
    badge.textContent = place === 0 ? "Starting" : `Queued · #${place}`;
    badge.title = place === 0 ? "A slot is free: the run is starting" : `Place ${place} in the run queue`;
  }

  const lastRun = element.querySelector(".last-run");
  if (card.lastRun) {
    const run = card.lastRun;
    const when = run.finishedAt ?? run.startedAt;
    lastRun.dataset.runStatus = run.status;
    lastRun.textContent = `Run ${run.id} · ${run.stage} · ${runStatusWords[run.status] ?? run.status}`;
    // Where the run went, when it is not the repository's own sandbox (E2B took it
    // because Docker's slots were full, or it was sent elsewhere by hand).
    if (run.insteadOf) {
      const where = el("span", {
        class: "run-elsewhere",
        text: ` · on ${backendNames[run.backend] ?? run.backend}`,
        title: `This run went to ${backendNames[run.backend] ?? run.backend}, not to the repository's ${backendNames[run.insteadOf] ?? run.insteadOf}`,
      });
      lastRun.append(where);
    }
    if (when) lastRun.append(timeSpan(when, " · "));
  } else {
    lastRun.replaceChildren(timeSpan(card.createdAt, "Created "));
  }
}

// The card's element: the one on the board when its data did not change.
function cardFor(card, actions) {
  const signature = JSON.stringify(card) + (actions.selected === card.feedbackId ? "|selected" : "")
    + (actions.picked?.has(card.feedbackId) ? "|picked" : "");
  const drawn = drawnCards.get(card.feedbackId);
  if (drawn && drawn.signature === signature) return drawn.element;
  const element = cardElement(card, actions);
  cardsDrawn += 1;
  drawnCards.set(card.feedbackId, { signature, element });
  return element;
}

function sameElements(list, elements) {
  const children = list.children;
  if (children.length !== elements.length) return false;
  return elements.every((element, index) => children[index] === element);
}

// A column holding more items than it has cards ends in this line; once it scrolls
// into view, the board asks for more cards (`actions.showMore`).
function moreLine(status, actions) {
  const line = document.createElement("li");
  line.className = "cards-more";
  line.dataset.status = status;
  const watcher = new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting) && line.isConnected) actions.showMore?.();
  }, { rootMargin: "300px" });
  watcher.observe(line);
  return line;
}

function columnFor(group, actions) {
  let drawn = drawnColumns.get(group.status);
  if (!drawn) {
    const element = columnTemplate.content.firstElementChild.cloneNode(true);
    element.dataset.status = group.status;
    if (group.status === "NEW") {
      const runAllNew = element.querySelector(".run-all-new");
      runAllNew.addEventListener("click", () => actions.runAllNew?.());
    }
    drawn = { element, more: moreLine(group.status, actions) };
    drawnColumns.set(group.status, drawn);
  }
  const element = drawn.element;
  const title = element.querySelector(".column-title");
  if (title.textContent !== group.label) title.textContent = group.label;
  const count = element.querySelector(".column-count");
  if (count.textContent !== String(group.total)) count.textContent = String(group.total);
  const list = element.querySelector(".cards");
  const cards = group.cards.map((card) => cardFor(card, actions));
  if (group.total > group.cards.length) {
    drawn.more.textContent = `${group.cards.length} of ${group.total} shown; more as you scroll`;
    cards.push(drawn.more);
  }
  if (!sameElements(list, cards)) list.replaceChildren(...cards);
  element.querySelector(".column-empty").hidden = group.total > 0;
  if (group.status === "NEW") {
    element.querySelector(".run-all-new").hidden = group.total === 0 || Boolean(actions.showingOffTheBoard);
  }
  return element;
}

export function renderBoard(board, dashboard, { onlyStatus, actions }) {
  // A card drawn anew keeps the keyboard if its old element had it.
  const focusedId = document.activeElement?.closest?.(".card")?.dataset.feedbackId ?? null;
  const groups = dashboard.groups.filter((group) => !onlyStatus || group.status === onlyStatus);
  const shownIds = new Set(groups.flatMap((group) => group.cards.map((card) => card.feedbackId)));
  for (const id of [...drawnCards.keys()]) {
    if (!shownIds.has(id)) drawnCards.delete(id);
  }
  const columns = groups.map((group) => columnFor(group, actions));
  if (!sameElements(board, columns)) board.replaceChildren(...columns);
  board.classList.toggle("single", Boolean(onlyStatus));
  board.dataset.cardsDrawn = String(cardsDrawn);
  if (focusedId != null && !document.activeElement?.closest?.(".card")) {
    board.querySelector(`.card[data-feedback-id="${focusedId}"] .card-open`)?.focus();
  }
}
