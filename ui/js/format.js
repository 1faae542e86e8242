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

/** Dollars as people read them: $3.50, and four places below a cent ($0.0048). */
export function dollars(usd) {
  return usd > 0 && usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** A token count as people read it: 980, 3.6k, 1.2M. */
export function tokenCount(count) {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/**
 * What a run spent: the cost and the tokens, where they come from (measured at the
 * key forwarder, or as the agent reported them), and whether the owner's Claude plan
 * paid (its cost is then what its credit was drawn, at API prices). Tokens with no cost read "price
 * unknown", never $0.
 * @param {{ llmCostUsd: number | null, tokensIn: number | null, tokensOut: number | null, spendSource?: string | null, unpricedTokens?: number | null, paidWith?: string | null }} run
 */
export function runSpend(run) {
  const parts = [];
  const unpriced = run.unpricedTokens ?? 0;
  if (run.llmCostUsd != null) {
    parts.push(unpriced > 0 ? `${dollars(run.llmCostUsd)} + ${tokenCount(unpriced)} tokens at an unknown price` : dollars(run.llmCostUsd));
  }
  if (run.tokensIn != null || run.tokensOut != null) {
    if (run.llmCostUsd == null) parts.push("price unknown");
    parts.push(`${tokenCount(run.tokensIn ?? 0)} tokens in, ${tokenCount(run.tokensOut ?? 0)} out`);
  }
  if (parts.length && run.spendSource === "metered") parts.push("metered");
  if (parts.length && run.spendSource === "reported") parts.push("as reported by the agent");
  if (parts.length && run.paidWith === "claude-plan") parts.push("from the Claude plan's credit");
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

// The sandboxes' names as the window says them.
export const backendNames = {
  docker: "Docker",
  e2b: "E2B",
  local: "a local process",
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
