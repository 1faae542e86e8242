// @ts-check
// Settings → Spend: the month of one repository (or of all) as a chart the page draws
// in SVG, with the budget line; the owner's Claude plan against its monthly credit; the
// five items that cost most; per model and per stage; the budgets (per run, per day),
// the plan, and the price table.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { dollars, tokenCount } from "./format.js";
import { toast } from "./toasts.js";

const svgNamespace = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, children = []) {
  const element = document.createElementNS(svgNamespace, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  for (const child of children) if (child) element.append(child);
  return element;
}


/**
 * The month's spend, day by day and added up, against the budget.
 * @param {import("./contract.js").MonthSpendRecord} month
 */
function monthChart(month) {
  const width = 560;
  const height = 170;
  const left = 52;
  const bottom = 22;
  const top = 22;
  const plotWidth = width - left - 10;
  const plotHeight = height - top - bottom;
  // The running total is drawn up to today (the whole month for a month gone by).
  const today = new Date().toISOString().slice(0, 10);
  let running = 0;
  const added = month.days.filter((day) => day.day <= today).map((day) => (running += day.costUsd));
  const highest = Math.max(running, month.budgetUsd ?? 0, 0.01);
  // Each day has a slot; its bar and its running total stand at the slot's middle.
  const x = (index) => left + (plotWidth * (index + 0.5)) / Math.max(month.days.length, 1);
  const y = (usd) => top + plotHeight - (plotHeight * usd) / highest;
  const barWidth = Math.max(plotWidth / month.days.length - 2, 2);
  const dayBars = month.days.map((day, index) =>
    svg("rect", {
      class: "chart-day",
      x: x(index) - barWidth / 2,
      y: y(day.costUsd),
      width: barWidth,
      height: Math.max(top + plotHeight - y(day.costUsd), day.costUsd > 0 ? 1 : 0),
    }, [svg("title", {}, [`${day.day}: ${dollars(day.costUsd)}, ${day.runs} run(s), ${tokenCount(day.tokens)} tokens`])]));
  // The running total starts at $0 before the first day and steps up day by day.
  const line = svg("polyline", {
    class: "chart-total",
    points: [`${left},${y(0)}`, ...added.map((usd, index) => `${x(index)},${y(usd)}`)].join(" "),
  });
  const now = added.length
    ? svg("circle", { class: "chart-now", cx: x(added.length - 1), cy: y(running), r: 4 }, [
      svg("title", {}, [`${dollars(running)} so far`]),
    ])
    : null;
  const label = (text, atX, atY, anchor = "end") => {
    const element = svg("text", { x: atX, y: atY, "text-anchor": anchor, class: "chart-label" });
    element.textContent = text;
    return element;
  };
  const budget = month.budgetUsd == null ? [] : [
    svg("line", { class: "chart-budget", x1: left, x2: left + plotWidth, y1: y(month.budgetUsd), y2: y(month.budgetUsd) }),
    label(`budget ${dollars(month.budgetUsd)}`, left + plotWidth, y(month.budgetUsd) - 5),
  ];
  const chart = svg("svg", {
    class: "spend-chart",
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `Spend in ${month.month}: ${dollars(month.costUsd)}${month.budgetUsd == null ? "" : ` of a ${dollars(month.budgetUsd)} budget`}, day by day`,
  }, [
    svg("line", { class: "chart-axis", x1: left, x2: left + plotWidth, y1: top + plotHeight, y2: top + plotHeight }),
    label(dollars(highest), left - 6, top + 8),
    label("$0", left - 6, top + plotHeight),
    label(month.days[0]?.day.slice(5) ?? "", x(0), height - 6, "middle"),
    label(month.days.at(-1)?.day.slice(5) ?? "", x(month.days.length - 1), height - 6, "middle"),
    ...dayBars,
    line,
    now,
    ...budget,
  ]);
  return chart;
}

/** @param {import("./contract.js").PartSpendRecord[]} parts @param {string} title */
function partsTable(parts, title) {
  if (!parts.length) return null;
  return el("table", { class: "spend-parts" }, [
    el("caption", { text: title }),
    el("tbody", {}, parts.map((part) => el("tr", {}, [
      el("td", { class: "mono", text: part.name }),
      el("td", { text: `${tokenCount(part.tokens)} tokens` }),
      el("td", { text: dollars(part.costUsd) }),
    ]))),
  ]);
}

/** @param {import("./contract.js").MonthSpendRecord} month */
function topItems(month) {
  if (!month.topItems.length) return el("p", { class: "muted", text: "No run has spent anything this month." });
  return el("table", { class: "spend-top" }, [
    el("caption", { text: "Top items" }),
    el("tbody", {}, month.topItems.map((item) => el("tr", {}, [
      el("td", { text: item.feedbackId != null ? `${item.repo} · feedback ${item.feedbackId}` : `${item.repo} · PR #${item.prNumber}` }),
      el("td", { class: "spend-title", text: item.title ?? "" }),
      el("td", { text: `${item.runs} run${item.runs === 1 ? "" : "s"}` }),
      el("td", { text: dollars(item.costUsd) }),
    ]))),
  ]);
}

function field(label, input, hint) {
  return el("label", {}, [label, hint ? el("span", { class: "hint", text: ` ${hint}` }) : null, input]);
}

function textInput(name, value, placeholder) {
  const input = el("input", { attrs: { name, type: "text", spellcheck: "false", placeholder } });
  input.value = value ?? "";
  return input;
}

/** @param {string} name @param {string} value @param {[string, string][]} options */
function choice(name, value, options) {
  const select = el("select", { attrs: { name } });
  for (const [word, text] of options) select.append(new Option(text, word, false, word === value));
  return select;
}

/**
 * The owner's Claude plan this month: what its runs drew from its credit.
 * @param {import("./contract.js").PlanMonthRecord} plan
 */
function planLine(plan) {
  const share = plan.creditUsd > 0 ? Math.min(plan.drawnUsd / plan.creditUsd, 1) : 1;
  const meter = el("progress", { class: "plan-meter", attrs: { max: "1", "aria-label": `${plan.label} credit drawn` } });
  meter.value = share;
  return el("div", { class: "plan-credit" }, [
    el("p", {}, [
      el("strong", { text: `${plan.label}: ${dollars(plan.drawnUsd)} of its ${dollars(plan.creditUsd)} monthly credit drawn (${Math.round(share * 100)}%)` }),
      el("span", { class: "muted", text: ` at API prices, by runs of every repository. ${plan.stopsAtCredit ? "Its runs stop once the credit is drawn." : "Past the credit, your account pays API rates."}` }),
    ]),
    meter,
    plan.tokenKept ? null : el("p", { class: "hint plan-token-missing", text: "No plan token is kept, so Claude Code pays with the Anthropic API key: add the token in Settings → Keys." }),
  ]);
}

/** @param {import("./contract.js").BudgetSettingsView} settings @param {(input: import("./contract.js").BudgetSettingsInput) => Promise<void>} save */
function budgetForm(settings, save) {
  const runUsd = textInput("runUsd", settings.runUsd, "5 (none: no limit)");
  const runTokens = textInput("runTokens", settings.runTokens, "no limit");
  const dayUsd = textInput("dayUsd", settings.dayUsd, "no limit");
  const claudePlan = choice("claudePlan", settings.claudePlan, [
    ["", "None: API keys only"],
    ["pro", "Pro: $20 credit"],
    ["max-5x", "Max 5x: $100 credit"],
    ["max-20x", "Max 20x: $200 credit"],
  ]);
  const pastCredit = choice("planPastCredit", settings.planPastCredit, [
    ["stop", "Stop its runs"],
    ["go-on", "Go on at API rates"],
  ]);
  const ownPrices = el("textarea", { attrs: { name: "ownPrices", rows: "2", spellcheck: "false", placeholder: "my-model 1.00 4.00" } });
  ownPrices.value = settings.ownPrices;
  const errorLine = el("p", { class: "form-error" });
  errorLine.hidden = true;
  const form = el("form", { class: "budget-form" }, [
    el("div", { class: "form-grid" }, [
      field("Per run ($)", runUsd, "(its next model call is refused once spent)"),
      field("Tokens per run", runTokens),
      field("All runs per day ($)", dayUsd, "(UTC)"),
    ]),
    el("div", { class: "form-grid" }, [
      field("Claude plan", claudePlan, "(its token goes in Keys)"),
      field("Once its credit is drawn", pastCredit),
    ]),
    field("Your prices", ownPrices, "(one per line: MODEL INPUT OUTPUT [CACHE_WRITE CACHE_READ], $ per million tokens)"),
    errorLine,
    el("div", { class: "modal-actions" }, [el("button", { type: "submit", class: "button primary save-budgets", text: "Save budgets" })]),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorLine.hidden = true;
    try {
      await save({ runUsd: runUsd.value, runTokens: runTokens.value, dayUsd: dayUsd.value, ownPrices: ownPrices.value, claudePlan: claudePlan.value, planPastCredit: pastCredit.value });
    } catch (error) {
      errorLine.hidden = false;
      errorLine.textContent = error.message;
    }
  });
  return form;
}

/** @param {import("./contract.js").BudgetSettingsView} settings */
function priceTable(settings) {
  const rows = settings.prices.map((price) => el("tr", { dataset: { model: price.model } }, [
    el("td", { class: "mono", text: price.model }),
    el("td", { text: `$${price.input}` }),
    el("td", { text: `$${price.output}` }),
    el("td", { text: `$${price.cacheWrite}` }),
    el("td", { text: `$${price.cacheRead}` }),
    el("td", { class: "muted", text: price.own ? "yours" : "default" }),
  ]));
  return el("details", { class: "price-table" }, [
    el("summary", { text: `Prices per million tokens (defaults checked ${settings.pricesChecked}; a model not listed shows "price unknown")` }),
    el("table", {}, [
      el("thead", {}, [el("tr", {}, ["Model", "Input", "Output", "Cache write", "Cache read", ""].map((text) => el("th", { text })))]),
      el("tbody", {}, rows),
    ]),
  ]);
}

/**
 * Draws the Spend tab into `panel`, for `repo` (every repository when null).
 * @param {HTMLElement} panel @param {string | null} repo
 */
export async function renderSpend(panel, repo = null) {
  const view = await backend.spendView(repo);
  draw(panel, view, repo);
}

/** @param {HTMLElement} panel @param {import("./contract.js").SpendView} view @param {string | null} repo */
function draw(panel, view, repo) {
  const month = view.month;
  const chooser = el("select", { class: "spend-repo", attrs: { name: "spendRepo", "aria-label": "Whose spend" } });
  chooser.append(new Option("All repositories", "", false, repo == null));
  for (const name of view.repos) chooser.append(new Option(name, name, false, name === repo));
  chooser.addEventListener("change", () => renderSpend(panel, chooser.value || null).catch((error) => toast(error.message)));
  const share = month.budgetUsd ? ` of ${dollars(month.budgetUsd)} (${Math.round((month.costUsd / month.budgetUsd) * 100)}%)` : "";
  const unpriced = month.unpricedTokens > 0 || month.runsWithoutCost > 0
    ? el("p", { class: "hint", text: `Not in the total: ${tokenCount(month.unpricedTokens)} tokens of models with no price, ${month.runsWithoutCost} run(s) with no cost known.` })
    : null;
  const save = async (input) => {
    const saved = await backend.saveBudgetSettings(input, repo);
    toast("Saved the budgets", { kind: "success" });
    draw(panel, saved, repo);
  };
  const parts = [
    el("div", { class: "spend-header" }, [
      el("h3", { text: `Spend in ${month.month}` }),
      chooser,
      el("strong", { class: "spend-total", text: `${dollars(month.costUsd)}${share}` }),
      el("span", { class: "muted", text: `${month.runs} run${month.runs === 1 ? "" : "s"} · ${tokenCount(month.tokens)} tokens` }),
    ]),
    view.plan ? planLine(view.plan) : null,
    monthChart(month),
    month.budgetUsd == null && repo != null ? el("p", { class: "hint", text: "No monthly budget: set one in this repository's settings." }) : null,
    unpriced,
    el("div", { class: "spend-columns" }, [topItems(month), partsTable(month.byModel, "Per model"), partsTable(month.byStage, "Per stage")]),
    el("h3", { text: "Budgets" }),
    budgetForm(view.settings, save),
    priceTable(view.settings),
    button("Refresh", () => renderSpend(panel, repo).catch((error) => toast(error.message)), "button small quiet"),
  ];
  panel.replaceChildren(...parts.filter((part) => part != null));
}
