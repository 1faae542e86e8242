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
