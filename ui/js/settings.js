// @ts-check
// Settings: the connected repositories (connect from the account's list or by name,
// each one's settings, environment (environment.js), lessons (lessons.js) and stage
// prompts, disconnect), the keys (set or not set, never
// shown), Spend (spend.js), Check setup (a line per check, with the button that fixes it), the log (its
// level, its last lines as plain text, and its folder), and updates (updates.js).

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { toast, errorToast } from "./toasts.js";
import { renderUpdates } from "./updates.js";
import { renderSpend } from "./spend.js";
import { renderLessons } from "./lessons.js";
import { renderEnvironment } from "./environment.js";
import { renderAgentBranches, forkFixButton } from "./agent_fork.js";
import { field, input, select } from "./form_fields.js";
import { repoSettingsForm, stagePromptBoxes } from "./repo_settings_form.js";

const dialog = document.getElementById("settings-dialog");
const panels = {
  repositories: document.getElementById("repositories-panel"),
  keys: document.getElementById("keys-panel"),
  spend: document.getElementById("spend-panel"),
  setup: document.getElementById("setup-panel"),
  log: document.getElementById("log-panel"),
  updates: document.getElementById("updates-panel"),
};
let hooks = { signIn: () => {}, changed: () => {} };
let shownRepo = null;

export function configureSettings(withHooks) {
  hooks = { ...hooks, ...withHooks };
}

/**
 * Opens the settings at `tab`; resolves once the repositories tab is drawn.
 * @param {string} [tab] @param {{ repo?: string, focus?: string }} [options]
 */
export function openSettings(tab = "repositories", options = {}) {
  if (!dialog.open) dialog.showModal();
  return showTab(tab, options);
}

/** Shows `tab`; resolves once the repositories tab is drawn (the others draw on). */
function showTab(tab, options = {}) {
  for (const [name, panel] of Object.entries(panels)) panel.hidden = name !== tab;
  for (const button of dialog.querySelectorAll(".tab")) {
    const current = button.dataset.tab === tab;
    button.classList.toggle("active", current);
    button.setAttribute("aria-selected", String(current));
    // One tab stop for the tab list; the arrow keys move between the tabs.
    button.tabIndex = current ? 0 : -1;
  }
  dialog.dataset.tab = tab;
  if (tab === "repositories") {
    return renderRepositories(options.repo ?? shownRepo)
      .then(() => { if (options.focus) document.getElementById(options.focus)?.scrollIntoView({ block: "start" }); })
      .catch(errorToast);
  }
  if (tab === "keys") renderKeys(options.focus).catch(errorToast);
  if (tab === "spend") renderSpend(panels.spend, options.repo ?? null).catch(errorToast);
  if (tab === "setup") renderSetup().catch(errorToast);
  if (tab === "log") renderLog().catch(errorToast);
  if (tab === "updates") renderUpdates(panels.updates).catch(errorToast);
  return Promise.resolve();
}

const tabButtons = [...dialog.querySelectorAll(".tab")];
for (const button of tabButtons) {
  button.addEventListener("click", () => showTab(button.dataset.tab));
  button.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    event.preventDefault();
    const next = tabButtons[(tabButtons.indexOf(button) + step + tabButtons.length) % tabButtons.length];
    next.focus();
    showTab(next.dataset.tab);
  });
}
document.getElementById("settings-close").addEventListener("click", () => dialog.close());
dialog.addEventListener("close", () => hooks.changed());

const repoName = (repo) => `${repo.name.owner}/${repo.name.name}`;

// --- Repositories -------------------------------------------------------------------

/** How many draws of the repositories tab and of one repository's settings began: a draw
 * whose answers come after a later one began draws nothing. */
let repositoryDraws = 0;
let repoSettingsDraws = 0;

async function renderRepositories(focusRepo) {
  const panel = panels.repositories;
  const draw = ++repositoryDraws;
  const repos = await backend.repos();
  const list = el("ul", { class: "repo-list" });
  for (const repo of repos) {
    const name = repoName(repo);
    const row = el("li", { class: "repo-row", dataset: { repo: name } }, [
      el("strong", { class: "mono", text: name }),
      el("span", { class: "muted", text: `${repo.sandboxBackend} · ${repo.agentPreset}` }),
      button("Settings", () => renderRepoSettings(name).catch(errorToast), "button small open-repo-settings"),
    ]);
    list.append(row);
  }
  const connectPanel = renderConnect(repos);
  const slotsPanel = await renderQueueSlots();
  if (draw !== repositoryDraws) return;
  const detail = el("div", { class: "repo-settings", attrs: { id: "repo-settings" } });
  panel.replaceChildren(
    el("div", { class: "settings-columns" }, [
      el("div", { class: "settings-side" }, [
        el("h3", { text: `Connected (${repos.length})` }),
        repos.length ? list : el("p", { class: "muted", text: "No repository is connected yet." }),
        connectPanel,
        slotsPanel,
      ]),
      detail,
    ]),
  );
  const first = focusRepo && repos.some((repo) => repoName(repo) === focusRepo) ? focusRepo : repos[0] ? repoName(repos[0]) : null;
  if (first) await renderRepoSettings(first);
  else detail.append(el("p", { class: "muted", text: "Connect a repository to set it up." }));
}

// How many runs go at once on this installation and on each backend (a repository's
// own slots are among its settings); empty means the default, or no limit of its own.
async function renderQueueSlots() {
  const slots = await backend.queueSlots();
  const form = el("form", { class: "queue-slots" });
  const errorLine = el("p", { class: "form-error" });
  errorLine.hidden = true;
  const slotInput = (name, value, placeholder) =>
    input(name, value == null ? "" : String(value), { type: "number", placeholder });
  form.append(
    el("h3", { text: "Run queue" }),
    field("Runs at once", slotInput("installation", slots.installation === slots.installationDefault ? null : slots.installation, `${slots.installationDefault} (this machine's default)`)),
    el("div", { class: "queue-slot-backends" }, [
      field("Docker", slotInput("docker", slots.docker, "no limit")),
      field("E2B", slotInput("e2b", slots.e2b, "no limit")),
      field("Local", slotInput("local", slots.local, "no limit")),
    ]),
    el("p", { class: "hint", text: "Runs wait in the queue for a slot; each backend's own limit holds too." }),
    errorLine,
    el("button", { type: "submit", class: "button small save-queue-slots", text: "Save" }),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorLine.hidden = true;
    const data = new FormData(form);
    try {
      const saved = await backend.setQueueSlots({
        installation: String(data.get("installation") ?? ""),
        docker: String(data.get("docker") ?? ""),
        e2b: String(data.get("e2b") ?? ""),
        local: String(data.get("local") ?? ""),
      });
      toast(`Saved the run queue: ${saved.installation} at once`, { kind: "success" });
    } catch (error) {
      errorLine.hidden = false;
      errorLine.textContent = error.message;
    }
  });
  return form;
}

function renderConnect(repos) {
  const box = el("section", { class: "connect" }, [el("h3", { text: "Connect a repository" })]);
  const search = el("input", { class: "connect-search", attrs: { type: "search", placeholder: "Search your repositories…", spellcheck: "false" } });
  const results = el("ul", { class: "connect-results" });
  const typed = el("form", { class: "connect-typed" });
  const typedName = input("fullName", "", { placeholder: "owner/name" });
  typed.append(typedName, el("button", { type: "submit", class: "button small", text: "Connect" }));
  typed.addEventListener("submit", (event) => {
    event.preventDefault();
    connect(typedName.value);
  });
  let timer = null;
  let generation = 0;
  const load = async () => {
    const mine = ++generation;
    results.replaceChildren(el("li", { class: "muted", text: "Asking GitHub…" }));
    try {
      const choices = await backend.repositoryChoices(search.value);
      if (mine !== generation) return;
      results.replaceChildren(...choices.slice(0, 50).map((choice) => el("li", { class: "connect-choice", dataset: { repo: choice.fullName } }, [
        el("span", { class: "mono", text: choice.fullName }),
        choice.private ? el("span", { class: "badge", text: "private" }) : null,
        choice.canPush ? null : el("span", { class: "badge warning", text: "read only" }),
        choice.connected
          ? el("span", { class: "badge", text: "connected" })
          : button("Connect", () => connect(choice.fullName), "button small connect-choice-button"),
      ])));
      if (!choices.length) results.append(el("li", { class: "muted", text: "No repository matches." }));
    } catch (error) {
      if (mine !== generation) return;
      results.replaceChildren(el("li", { class: "muted", text: error.code === "github_auth" ? "Sign in to GitHub to list your repositories." : error.message }));
    }
  };
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(load, 200);
  });
  load();
  box.append(search, results, el("p", { class: "hint", text: "Or type it:" }), typed);
  return box;
}

async function connect(fullName) {
  try {
    const repo = await backend.connectRepository(fullName.trim());
    toast(`Connected ${repoName(repo)}`, { kind: "success" });
    shownRepo = repoName(repo);
    await renderRepositories(shownRepo);
    hooks.changed();
  } catch (error) {
    errorToast(error);
  }
}

async function renderRepoSettings(fullName) {
  shownRepo = fullName;
  const draw = ++repoSettingsDraws;
  const view = await backend.repoSettings(fullName);
  const detail = document.getElementById("repo-settings");
  if (!detail || draw !== repoSettingsDraws) return;
  for (const row of panels.repositories.querySelectorAll(".repo-row")) row.classList.toggle("selected", row.dataset.repo === fullName);

  const lessons = el("section", { class: "lessons", attrs: { id: "lessons", "aria-label": `Lessons of ${fullName}` } });
  const environment = el("section", { class: "environment", attrs: { id: "environment", "aria-label": `The agent's environment in ${fullName}` } });
  const agentBranches = el("section", { class: "agent-branches", attrs: { id: "agent-branches", "aria-label": `Where ${fullName}'s agent branches go` } });
  detail.replaceChildren(
    el("div", { class: "repo-settings-header" }, [el("h3", { class: "mono", text: fullName }), disconnectControl(fullName)]),
    agentBranches,
    repoSettingsForm(view, fullName, async () => {
      await renderRepositories(fullName);
      hooks.changed();
    }),
    environment,
    lessons,
    el("h3", { text: "Stage prompts" }),
    el("p", { class: "hint", text: "What the review, plan, test, fix and lessons stages ask the agent. Placeholders: {{pr_number}} {{pr_title}} {{branch}} {{base}} {{review}} {{plan}} {{failures}} {{instructions}}." }),
    stagePromptBoxes(view, fullName, () => renderRepoSettings(fullName)),
  );
  await Promise.all([
    renderAgentBranches(agentBranches, fullName, view.repo, async () => {
      await renderRepositories(fullName);
      hooks.changed();
    }),
    renderLessons(lessons, fullName),
    renderEnvironment(environment, fullName),
  ]);
}

/** A repository's "Disconnect…", asked before it is done. @param {string} fullName */
function disconnectControl(fullName) {
  const disconnectBox = el("div", { class: "disconnect" });
  const askDisconnect = button("Disconnect…", () => {
    disconnectBox.replaceChildren(
      el("p", { text: `Disconnect ${fullName}? Its feedback, runs and comments stay here; syncs and runs leave it alone until you connect it again.` }),
      button("Disconnect", async () => {
        try {
          await backend.disconnectRepository(fullName);
          toast(`Disconnected ${fullName}`);
          shownRepo = null;
          await renderRepositories(null);
          hooks.changed();
        } catch (error) {
          errorToast(error);
        }
      }, "button danger confirm-disconnect"),
      button("Keep it", () => disconnectBox.replaceChildren(askDisconnect), "button quiet"),
    );
  }, "button small quiet danger-text");
  disconnectBox.append(askDisconnect);
  return disconnectBox;
}

/** Opens a repository's settings at its environment. @param {string} fullName */
function openEnvironment(fullName) {
  return showTab("repositories", { repo: fullName, focus: "environment" });
}

/** Opens a repository's settings at its lessons. @param {string} fullName */
export async function openLessons(fullName) {
  await openSettings("repositories", { repo: fullName });
  document.getElementById("lessons")?.scrollIntoView({ block: "start" });
}

// --- Keys -----------------------------------------------------------------------------

async function renderKeys(focus) {
  const panel = panels.keys;
  const states = await backend.keyStates();
  const rows = states.map((state) => {
    const row = el("li", { class: "key-row", dataset: { key: state.name, set: String(state.set) } });
    const draw = () => {
      const entry = el("input", { class: "key-input", attrs: { type: "password", autocomplete: "off", placeholder: state.placeholder, "aria-label": `${state.label} key` } });
      const saveKey = async () => {
        try {
          await backend.setKey(state.name, entry.value);
          entry.value = "";
          toast(`The ${state.name} key is kept in your system's keyring`, { kind: "success" });
          await renderKeys();
          hooks.changed();
        } catch (error) {
          errorToast(error);
        }
      };
      entry.addEventListener("keydown", (event) => {
        if (event.key === "Enter") saveKey();
      });
      row.replaceChildren(
        el("div", { class: "key-label" }, [
          el("strong", { text: state.label }),
          state.forHost ? el("span", { class: "hint", text: ` for ${state.forHost}` }) : null,
        ]),
        el("span", { class: `badge key-state ${state.set || state.optional ? "" : "warning"}`, text: state.set ? "set" : "not set" }),
        entry,
        button(state.set ? "Replace" : "Save", saveKey, "button small save-key"),
        state.set
          ? button("Remove", async () => {
              try {
                await backend.removeKey(state.name);
                toast(`Removed the ${state.name} key`);
                await renderKeys();
              } catch (error) {
                errorToast(error);
              }
            }, "button small quiet remove-key")
          : null,
      );
      if (focus === state.name) entry.focus();
    };
    draw();
    return row;
  });
  panel.replaceChildren(
    el("p", { class: "hint", text: "Keys go to your system's keyring and nowhere else; this window only ever learns whether one is set." }),
    el("ul", { class: "key-list" }, rows),
  );
}

// --- Check setup ------------------------------------------------------------------------

const statusIcons = { ok: "✓", warning: "!", failure: "✕" };

function fixButton(fix) {
  switch (fix?.kind) {
    case "sign_in":
      return button("Sign in", () => hooks.signIn(), "button small fix-sign-in");
    case "add_key":
      return button(`Add the ${fix.provider} key`, () => showTab("keys", { focus: fix.provider }), "button small fix-add-key");
    case "add_e2b_key":
    case "replace_e2b_key":
      return button("E2B key", () => showTab("keys", { focus: "e2b" }), "button small fix-add-key");
    case "choose_another_agent":
      return button("Repository settings", () => showTab("repositories", { repo: fix.repo }), "button small");
    case "grant_token_permission":
      return button("Sign in with another token", () => hooks.signIn(), "button small fix-sign-in");
    case "make_agent_fork":
      return forkFixButton(fix, () => renderSetup(), async () => {
        showTab("repositories", { repo: fix.repo });
        await renderRepoSettings(fix.repo);
        document.getElementById("agent-branches")?.scrollIntoView({ block: "start" });
      });
    case "build_image":
      return null; // drawn with its log below
    case "build_environment":
      return button("Environment", () => openEnvironment(fix.repo).catch(errorToast), "button small fix-build-environment");
    default:
      return null;
  }
}

async function renderSetup() {
  const panel = panels.setup;
  const again = button("Check again", () => renderSetup().catch(errorToast), "button small check-again");
  panel.replaceChildren(el("div", { class: "setup-head" }, [again, el("span", { class: "muted", text: "Checking…" })]));
  const report = await backend.checkSetup();
  const list = el("ul", { class: "setup-lines" });
  for (const line of report.lines) {
    const item = el("li", { class: `setup-line ${line.status}`, dataset: { id: line.id, status: line.status } }, [
      el("span", { class: "setup-icon", text: statusIcons[line.status] ?? "?", attrs: { "aria-label": line.status } }),
      el("div", { class: "setup-text" }, [
        el("strong", { text: line.subject }),
        el("span", { text: ` ${line.detail}` }),
        line.fixSentence && line.status !== "ok" ? el("p", { class: "setup-fix hint", text: line.fixSentence }) : null,
      ]),
      fixButton(line.status !== "ok" ? line.fix : null),
    ]);
    if (line.status !== "ok" && line.fix?.kind === "build_image") item.append(buildBox(line.fix));
    list.append(item);
  }
  const worst = report.lines.some((l) => l.status === "failure") ? "failure" : report.lines.some((l) => l.status === "warning") ? "warning" : "ok";
  panel.dataset.status = worst;
  panel.replaceChildren(
    el("div", { class: "setup-head" }, [
      again,
      el("span", { class: `setup-summary ${worst}`, text: worst === "ok" ? "Everything a run needs is in place." : worst === "warning" ? "Runs can go; some things could be better." : "Some runs would be refused until these are fixed." }),
    ]),
    list,
  );
}

function buildBox(fix) {
  const log = el("pre", { class: "build-log", attrs: { "aria-label": `Build log of ${fix.image}` } });
  log.hidden = true;
  const build = button("Build image", async () => {
    build.disabled = true;
    log.hidden = false;
    log.textContent = "";
    try {
      await backend.buildAgentImage(fix.preset, (line) => {
        log.append(line + "\n");
        log.scrollTop = log.scrollHeight;
      });
      toast(`Built ${fix.image}`, { kind: "success" });
      await renderSetup();
    } catch (error) {
      build.disabled = false;
      log.append(`\n${error.message}\n`);
      errorToast(error);
    }
  }, "button small primary build-image");
  return el("div", { class: "build-box", dataset: { preset: fix.preset } }, [build, log]);
}

// --- Log ------------------------------------------------------------------------------

const LOG_LEVELS = [
  ["error", "Errors only"],
  ["warn", "Warnings and errors"],
  ["info", "What Handoff does (default)"],
  ["debug", "Debug: every step"],
  ["trace", "Trace: everything"],
];

async function renderLog() {
  const panel = panels.log;
  const view = await backend.logView();
  const level = select("log-level", LOG_LEVELS, view.level);
  level.id = "log-level";
  level.disabled = Boolean(view.environmentFilter);
  level.addEventListener("change", async () => {
    try {
      await backend.setLogLevel(level.value);
      toast(`The log now keeps: ${LOG_LEVELS.find(([value]) => value === level.value)[1].toLowerCase()}`, { kind: "success" });
    } catch (error) {
      errorToast(error);
    }
  });
  // Log lines hold other people's text (error messages quoting GitHub, agent output):
  // they are shown as text, never as markup.
  const lines = el("pre", { class: "log-lines", attrs: { tabindex: "0", "aria-label": "The last lines of the log" } });
  lines.textContent = view.lines.length ? view.lines.join("\n") : "The log is empty.";
  panel.replaceChildren(
    el("p", { class: "hint", text: "What the app and the command line did in the background, and what went wrong. Secrets are never written to it." }),
    el("div", { class: "log-controls" }, [
      field("Keep in the log", level, view.environmentFilter ? `(set by HANDOFF_LOG=${view.environmentFilter})` : null),
      el("div", { class: "log-folder" }, [
        el("code", { class: "log-folder-path", text: view.folder }),
        button("Open log folder", async () => {
          try {
            await backend.openLogFolder();
          } catch (error) {
            errorToast(error);
          }
        }, "button small open-log-folder"),
        button("Refresh", () => renderLog().catch(errorToast), "button small quiet refresh-log"),
      ]),
    ]),
    lines,
  );
  lines.scrollTop = lines.scrollHeight;
}
