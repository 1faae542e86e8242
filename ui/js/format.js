// @ts-check
// Small text formatters for cards: relative times, money, counts.

const minute = 60 * 1000;
const hour = 60 * minute;
const day = 24 * hour;

export function relativeTime(isoText, now = Date.now()) {
  if (!isoText) return "";
  const then = Date.parse(isoText);
  if (Number.isNaN(then)) return "";
  const elapsed = Math.max(0, now - then);
  if (elapsed < minute) return "just now";
  if (elapsed < hour) return `${Math.floor(elapsed / minute)} min ago`;
  if (elapsed < day) return `${Math.floor(elapsed / hour)} h ago`;
  if (elapsed < 30 * day) return `${Math.floor(elapsed / day)} d ago`;
  return new Date(then).toLocaleDateString();
}

export function money(usd) {
  if (!usd) return "";
  return usd < 0.01 ? "<$0.01" : `$${usd.toFixed(2)}`;
}

/** A token count as people read it: 980, 3.6k, 1.2M. */
export function tokenCount(count) {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/**
 * What a run spent, as its agent reported it: the cost and the tokens, or that the
 * agent gave tokens but no cost (never $0 for a cost nobody said).
 * @param {{ llmCostUsd: number | null, tokensIn: number | null, tokensOut: number | null }} run
 */
export function runSpend(run) {
  const parts = [];
  if (run.llmCostUsd != null) parts.push(run.llmCostUsd < 0.01 ? `$${run.llmCostUsd.toFixed(4)}` : `$${run.llmCostUsd.toFixed(2)}`);
  if (run.tokensIn != null || run.tokensOut != null) {
    parts.push(`${tokenCount(run.tokensIn ?? 0)} tokens in, ${tokenCount(run.tokensOut ?? 0)} out`);
    if (run.llmCostUsd == null) parts.push("cost not reported by the agent");
  }
  return parts.join(" · ");
}

export function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export const runStatusWords = {
  queued: "queued",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
};

export const statusWords = {
  NEW: "New",
  CODING: "Coding",
  WAITING_FOR_REVIEW: "Waiting for review",
  FAILED: "Failed",
  MERGED: "Merged",
};

export const commentLabels = {
  review: "🔍 QA code review",
  plan: "🧪 QA test plan",
  results: "🧪 QA results",
  followups: "💬 Follow-ups",
};
