// @ts-check
// A run's steps as a timeline beside its log: each model call the key forwarder saw,
// with what the model asked to read, write or run, its tokens, time and cost. Every
// text here is the model's: it is set as text, never as markup.

import { backend } from "./backend.js";
import { el } from "./dom.js";
import { dollars, tokenCount } from "./format.js";

/** What a tool call did, in the owner's words: read, wrote, ran, or the tool's name. */
function toolWord(name) {
  const lower = name.toLowerCase();
  if (/(^|_)(read|view|cat|open|grep|glob|search|list|ls)/.test(lower)) return "read";
  if (/(write|edit|patch|create|apply|replace|multiedit)/.test(lower)) return "wrote";
  if (/(bash|shell|exec|run|command|terminal)/.test(lower)) return "ran";
  return name;
}

/** A tool call's input, shortened to what says most: a path or a command. */
function toolGist(input) {
  try {
    const parsed = JSON.parse(input);
    const gist = parsed.file_path ?? parsed.path ?? parsed.command ?? parsed.cmd ?? parsed.pattern;
    if (gist != null) return Array.isArray(gist) ? gist.join(" ") : String(gist);
  } catch {
    // Not JSON: a patch or a command as text.
  }
  return input.length > 120 ? `${input.slice(0, 120)}…` : input;
}

/** @param {import("./contract.js").AgentStepRecord} step @param {number} index */
function stepItem(step, index) {
  const cost = step.costUsd == null ? "price unknown" : dollars(step.costUsd);
  const tokens = `${tokenCount(step.inputTokens + step.cacheReadTokens + step.cacheWriteTokens)} in, ${tokenCount(step.outputTokens)} out`;
  const head = el("div", { class: "step-head" }, [
    el("strong", { text: `Step ${index + 1}` }),
    el("span", { class: "muted", text: `${(step.durationMs / 1000).toFixed(1)} s · ${step.model}` }),
    el("span", { class: "step-cost", text: `${cost} · ${tokens}` }),
    step.status === 200 ? null : el("span", { class: "badge danger", text: `HTTP ${step.status}` }),
  ]);
  const calls = el("ul", { class: "step-calls" }, step.toolCalls.map((call) =>
    el("li", {}, [el("span", { class: "step-verb", text: toolWord(call.name) }), el("code", { text: toolGist(call.input) })])));
  const item = el("li", { class: "step", dataset: { step: String(index + 1) } }, [head]);
  if (step.toolCalls.length) item.append(calls);
  if (step.text) item.append(el("p", { class: "step-text", text: step.text.length > 300 ? `${step.text.slice(0, 300)}…` : step.text }));
  if (step.detailsLeftOut) item.append(el("p", { class: "hint", text: "Past 5 MB of steps: only the figures are kept." }));
  if (step.usageUnread) item.append(el("p", { class: "hint", text: "The answer's usage could not be read (it broke off, or came in a shape the meter does not read): the call was charged all it reserved." }));
  return item;
}

/**
 * Fills `box` with run `runId`'s steps.
 * @param {number} runId @param {HTMLElement} box
 */
export async function showSteps(runId, box) {
  const steps = await backend.runSteps(runId);
  if (!steps.length) {
    box.replaceChildren(el("p", { class: "muted", text: "No metered steps: no key forwarder stood between this run's agent and its provider (E2B, or an agent without a key), or it called no model. On E2B the run's spend is what the agent reported as it ran." }));
    return;
  }
  const total = steps.reduce((sum, step) => sum + (step.costUsd ?? 0), 0);
  box.replaceChildren(
    el("p", { class: "steps-summary", text: `${steps.length} model call${steps.length === 1 ? "" : "s"} · ${dollars(total)} metered` }),
    el("ol", { class: "steps", attrs: { "aria-label": `Steps of run ${runId}` } }, steps.map(stepItem)),
  );
}
