// @ts-check
// A repository's lessons, in its settings: the proposals of the last lessons runs (each
// with the corrections it came from, as diffs of the agent's text against yours), with
// Accept, Edit and Reject; the accepted lessons, on or off, when each last reached a
// prompt and where it came from, flagged when its paths vanished or it went unused for
// long; "Suggest lessons", and when lessons start by themselves; "Write to AGENTS.md"
// (a PR that keeps a marked section of the file in step), and which file it is.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { diffView } from "./diff_view.js";
import { agentGets } from "./agent_gets.js";
import { toast, errorToast } from "./toasts.js";
import { ask } from "./question.js";

/** The section of the repository shown now, redrawn when its lessons or runs change. */
let shown = null;
/** How many draws began: a draw whose answer comes after a later one began draws nothing. */
let draws = 0;

/**
 * @param {HTMLElement} container @param {string} repo
 * @param {{ keepAnEdit?: boolean }} [options] a redraw the owner did not ask for leaves
 *   alone an edit that began while it was loading
 */
export async function renderLessons(container, repo, { keepAnEdit = false } = {}) {
  shown = { container, repo };
  const draw = ++draws;
  const view = await backend.lessonsView(repo);
  if (draw !== draws || shown?.container !== container || shown.repo !== repo) return;
  if (keepAnEdit && container.querySelector(".lesson-edit")) return;
  container.replaceChildren(...[
    el("div", { class: "lessons-head" }, [
      el("h3", { text: "Lessons" }),
      el("div", { class: "lessons-head-actions" }, [writeButton(view), suggestButton(view)]),
    ]),
    el("p", {
      class: "hint",
      text: "Rules drawn from your own corrections: your edits of the agent's review, plan and results, and your follow-ups on feedback PRs. Nothing reaches a prompt until you accept it; every later run of this repository carries the accepted ones.",
    }),
    waiting(view),
    group("Proposed", "proposed-lessons", view.proposals, view, "No proposal waits for you."),
    group("Accepted", "accepted-lessons", view.accepted, view, "No lesson accepted yet."),
    view.rejected.length ? rejected(view) : null,
    settingsForm(view),
  ].filter(Boolean));
}

/** Redraws the section when a change may touch it (a run ended, a lesson changed). */
export function refreshLessons(changes) {
  if (!shown || !shown.container.isConnected) return;
  if (!changes.everything && !changes.runIds.length) return;
  // A lesson being edited is never swapped away under the owner's hands; saving or
  // cancelling the edit draws the section again.
  if (shown.container.querySelector(".lesson-edit")) return;
  renderLessons(shown.container, shown.repo, { keepAnEdit: true }).catch(errorToast);
}

function suggestButton(view) {
  const running = view.activeRunId != null;
  const label = running ? `Lessons run ${view.activeRunId} is going…` : "Suggest lessons";
  const go = button(label, async () => {
    try {
      const runId = await backend.suggestLessons(view.repo);
      toast(`Lessons run ${runId} started: it reads ${view.newCorrections.length} corrections`);
      await renderLessons(shown.container, view.repo);
    } catch (error) {
      errorToast(error);
    }
  }, "button primary small suggest-lessons");
  go.disabled = running || view.newCorrections.length === 0;
  go.title = view.newCorrections.length === 0 ? "No correction of yours since lessons were last drawn" : `Reads your ${view.newCorrections.length} newest corrections`;
  return go;
}

function writeButton(view) {
  const write = async (replaceEdits) => {
    try {
      const written = await backend.writeLessonsFile(view.repo, replaceEdits);
      const words = {
        opened: `Opened PR #${written.prNumber}: ${written.path} carries the lessons`,
        updated: `Updated PR #${written.prNumber} with the lessons`,
        in_step: `${written.path} already holds the lessons as they are`,
      }[written.action];
      toast(words, { kind: "success" });
      await renderLessons(shown.container, view.repo);
    } catch (error) {
      if (error.code !== "owner_edits" || replaceEdits) {
        errorToast(error);
        return;
      }
      const answer = await ask({
        title: `Replace the edit of ${view.lessonsFile}?`,
        text: `${error.message}.\nKeep it, or replace the section with the accepted lessons (the edit stays in Handoff's history).`,
        answers: [
          { label: "Keep the edit", value: "keep", kind: "quiet" },
          { label: "Replace it", value: "replace", kind: "primary" },
        ],
      });
      if (answer === "replace") await write(true);
    }
  };
  const go = button(`Write to ${view.lessonsFile}`, () => write(false), "button small write-lessons-file");
  go.disabled = view.accepted.length === 0;
  go.title = go.disabled ? "Accept a lesson first" : `Opens a PR that keeps a marked section of ${view.lessonsFile} in step with the accepted lessons, or updates the one open`;
  return go;
}

function waiting(view) {
  const count = view.newCorrections.length;
  const words = count === 0
    ? "No correction of yours waits for the next lessons run."
    : count === 1
      ? "1 correction of yours waits for the next lessons run."
      : `${count} corrections of yours wait for the next lessons run.`;
  return el("div", { class: "lessons-status" }, [
    el("p", { class: "lessons-waiting", text: words }),
    view.lastRunWords ? el("p", { class: "muted lessons-last-run", text: `Last: ${view.lastRunWords}` }) : null,
    view.lessonsFilePrNumber != null && view.lessonsFilePrUrl
      ? el("p", { class: "lessons-file-pr" }, [
        `${view.lessonsFile} went out in `,
        button(`PR #${view.lessonsFilePrNumber}`, () => backend.openLink(view.lessonsFilePrUrl).catch(errorToast), "pr-link lessons-file-pr-link"),
      ])
      : null,
  ]);
}

function group(title, className, lessons, view, empty) {
  const list = el("ul", { class: `lesson-list ${className}` });
  for (const lesson of lessons) list.append(lessonItem(lesson, view));
  return el("section", { class: "lesson-group" }, [
    el("h4", { text: `${title} (${lessons.length})` }),
    lessons.length ? list : el("p", { class: "muted", text: empty }),
  ]);
}

function rejected(view) {
  const details = el("details", { class: "lesson-group rejected-lessons" }, [
    el("summary", { text: `Rejected (${view.rejected.length})` }),
  ]);
  const list = el("ul", { class: "lesson-list" });
  for (const lesson of view.rejected) list.append(lessonItem(lesson, view));
  details.append(list);
  return details;
}

function lessonState(lesson) {
  if (lesson.state === "proposed") return ["proposed", "proposed"];
  if (lesson.state === "rejected") return ["rejected", "rejected"];
  if (lesson.vanishedPaths.length) return ["flagged", `left out: ${lesson.vanishedPaths.join(", ")} gone from the base branch`];
  if (!lesson.enabled) return ["off", "off"];
  if (lesson.asksToKeep) return ["flagged", "unused for 90 days: keep it?"];
  return ["on", "on: later runs carry it"];
}

function when(text) {
  if (!text) return "never";
  return new Date(text).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function lessonItem(lesson, view) {
  const [state, stateWords] = lessonState(lesson);
  const item = el("li", { class: "lesson", dataset: { lessonId: String(lesson.id), state } });
  const decide = (decision, done) => async () => {
    try {
      await backend.decideLesson(lesson.id, decision);
      toast(done, { kind: "success" });
      await renderLessons(shown.container, view.repo);
    } catch (error) {
      errorToast(error);
    }
  };
  const actions = el("div", { class: "lesson-actions" });
  if (lesson.state === "proposed") {
    actions.append(
      button("Accept", decide("accept", `Lesson ${lesson.id} accepted: later runs carry it`), "button small primary accept-lesson"),
      button("Edit", () => editForm(item, lesson, view), "button small edit-lesson"),
      button("Reject", decide("reject", `Lesson ${lesson.id} rejected`), "button small quiet reject-lesson"),
    );
  } else if (lesson.state === "accepted") {
    const toggle = el("input", { class: "lesson-enabled", attrs: { type: "checkbox", "aria-label": `Lesson ${lesson.id} is on` } });
    toggle.checked = lesson.enabled;
    // The switch holds still while its decision is on the way: a second flick before
    // the first is recorded could reach the store first and leave it the other way.
    toggle.addEventListener("change", async () => {
      toggle.disabled = true;
      await (toggle.checked
        ? decide("enable", `Lesson ${lesson.id} is on`)
        : decide("disable", `Lesson ${lesson.id} is off: later runs leave it out`))();
      toggle.disabled = false;
    });
    actions.append(el("label", { class: "check-field lesson-toggle" }, [toggle, el("span", { text: "On" })]));
    if (lesson.vanishedPaths.length || lesson.asksToKeep) {
      actions.append(button("Keep as it is", decide("keep", `Lesson ${lesson.id} kept`), "button small keep-lesson"));
    }
    actions.append(button("Edit", () => editForm(item, lesson, view), "button small quiet edit-lesson"));
  } else {
    actions.append(button("Accept after all", decide("accept", `Lesson ${lesson.id} accepted`), "button small quiet accept-lesson"));
  }
  const facts = [
    lesson.origin,
    lesson.state === "accepted" ? `last in a prompt: ${when(lesson.lastCarriedAt)}` : null,
    lesson.paths.length ? `concerns ${lesson.paths.join(", ")}` : null,
  ].filter(Boolean).join(" · ");
  const sources = el("details", { class: "lesson-sources" }, [
    el("summary", { text: `From ${lesson.sources.length === 1 ? "1 correction" : `${lesson.sources.length} corrections`}: ${lesson.sources.map((source) => source.id).join(", ")}` }),
    ...lesson.sources.map((source) => el("div", { class: "lesson-source", dataset: { correction: source.id } }, [
      el("p", { class: "lesson-source-words", text: `${source.id} · ${source.words}` }),
      source.lines.length ? diffView(source.lines, "The same text as the agent's.") : el("blockquote", { class: "lesson-source-text", text: source.text }),
    ])),
  ]);
  if (lesson.state === "proposed") sources.open = true;
  item.append(
    el("div", { class: "lesson-head" }, [
      el("span", { class: "lesson-state badge", dataset: { state }, text: stateWords }),
      el("strong", { class: "lesson-rule", text: lesson.rule }),
    ]),
    lesson.why ? el("p", { class: "lesson-why", text: lesson.why }) : null,
    el("p", { class: "muted lesson-facts", text: facts }),
    // A proposal is the agent's words: accepting it puts them in every later prompt,
    // so they are shown as the prompt gets them, hidden characters and all.
    lesson.state === "proposed" || lesson.ruleRaw.hiddenParts.length ? agentGets(lesson.ruleRaw) : null,
    sources,
    actions,
  );
  return item;
}

function editForm(item, lesson, view) {
  const rule = el("textarea", { class: "lesson-rule-input", attrs: { rows: "2", "aria-label": "The rule" } });
  rule.value = lesson.rule;
  const why = el("textarea", { class: "lesson-why-input", attrs: { rows: "2", "aria-label": "Why" } });
  why.value = lesson.why;
  const paths = el("input", { class: "lesson-paths-input", attrs: { type: "text", spellcheck: "false", "aria-label": "Paths", placeholder: "src/lib.rs, docs/" } });
  paths.value = lesson.paths.join(", ");
  const errorLine = el("p", { class: "form-error" });
  errorLine.hidden = true;
  const form = el("form", { class: "lesson-edit" }, [
    el("label", {}, ["Rule", rule]),
    el("label", {}, ["Why", why]),
    el("label", {}, ["Paths it concerns", el("span", { class: "hint", text: " (comma-separated; empty: the whole repository)" }), paths]),
    errorLine,
    el("div", { class: "modal-actions" }, [
      button("Cancel", () => renderLessons(shown.container, view.repo).catch(errorToast), "button quiet small"),
      el("button", { type: "submit", class: "button primary small save-lesson", text: "Save lesson" }),
    ]),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await backend.editLesson(lesson.id, {
        rule: rule.value,
        why: why.value,
        paths: paths.value.split(",").map((path) => path.trim()).filter(Boolean),
      });
      toast(`Lesson ${lesson.id} saved`, { kind: "success" });
      await renderLessons(shown.container, view.repo);
    } catch (error) {
      errorLine.hidden = false;
      errorLine.textContent = error.message;
    }
  });
  item.replaceChildren(form);
  rule.focus();
}

function settingsForm(view) {
  const after = el("input", { class: "lessons-after", attrs: { type: "number", min: "1", placeholder: "only when you ask", "aria-label": "Suggest lessons by itself after this many new corrections" } });
  after.value = view.afterCorrections == null ? "" : String(view.afterCorrections);
  const file = el("input", { class: "lessons-file", attrs: { type: "text", spellcheck: "false", "aria-label": "Lessons file" } });
  file.value = view.lessonsFile;
  const form = el("form", { class: "lessons-settings form-grid" }, [
    el("label", {}, ["Suggest by itself after", el("span", { class: "hint", text: " new corrections (empty: only when you ask)" }), after]),
    el("label", {}, ["Lessons file", el("span", { class: "hint", text: " (AGENTS.md, CLAUDE.md)" }), file]),
    el("div", { class: "modal-actions" }, [el("button", { type: "submit", class: "button small save-lessons-settings", text: "Save" })]),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const text = after.value.trim();
      await backend.setLessonSettings(view.repo, { afterCorrections: text === "" ? null : Number(text), lessonsFile: file.value });
      toast("Saved the lesson settings", { kind: "success" });
      await renderLessons(shown.container, view.repo);
    } catch (error) {
      errorToast(error);
    }
  });
  return form;
}
