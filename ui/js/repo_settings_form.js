// @ts-check
// One repository's settings form (its branch, label, quota, budget, sandbox, agent,
// image, time limit, network, PR options and instructions, saved whole) and its stage
// prompts (each saved or reset on its own). The settings dialog (settings.js) places
// them and draws them again after a save.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { toast, errorToast } from "./toasts.js";
import { field, input, select } from "./form_fields.js";

/**
 * The controls of a repository's settings form that its save reads or its fields show
 * and hide.
 * @param {import("./contract.js").RepoSettingsView} view
 */
function repoFormControls(view) {
  const repo = view.repo;
  const agent = select("agentPreset", [...view.agents.map((a) => [a.name, a.name]), ["custom", "custom command"]], repo.agentPreset);
  const command = input("agentCommand", repo.agentCommand, { placeholder: "sh run-my-agent.sh" });
  const commandField = field("Custom command", command, "(runs in the working copy; the prompt is in $HANDOFF_PROMPT_FILE)");
  const agentNote = el("p", { class: "hint agent-note" });
  const showAgent = () => {
    commandField.hidden = agent.value !== "custom";
    const chosen = view.agents.find((a) => a.name === agent.value);
    agentNote.textContent = chosen
      ? `${chosen.package}${chosen.keyProvider ? ` · needs the ${chosen.keyProvider} key` : ""}${chosen.limitation ? ` · ${chosen.limitation}` : ""}`
      : "Your own command, in the image you name below (or Handoff's base image with git).";
  };
  agent.addEventListener("change", showAgent);
  const backendSelect = select("sandboxBackend", [["docker", "Docker"], ["e2b", "E2B (cloud)"], ["local", "Local process (no isolation)"]], repo.sandboxBackend);
  const networkSelect = select("networkMode", [
    ["allowlist", "Allow-list (API + hosts)"],
    ["none", "None"],
    ["open", "Open (any public address)"],
  ], repo.networkMode);
  const allowedHosts = el("textarea", {
    class: "allowed-hosts",
    attrs: { name: "allowedHosts", rows: "2", spellcheck: "false", placeholder: "registry.npmjs.org\n*.pypi.org" },
  });
  allowedHosts.value = repo.allowedHosts.join("\n");
  const showNetwork = () => {
    allowedHosts.disabled = networkSelect.value !== "allowlist";
  };
  networkSelect.addEventListener("change", showNetwork);
  const checkbox = (name, checked) => {
    const box = el("input", { attrs: { type: "checkbox", name } });
    box.checked = Boolean(checked);
    return box;
  };
  const instructions = el("textarea", { attrs: { name: "customInstructions", rows: "3" } });
  instructions.value = repo.customInstructions;
  return {
    agent,
    commandField,
    agentNote,
    showAgent,
    backendSelect,
    networkSelect,
    allowedHosts,
    showNetwork,
    quotaInput: input("monthlyRunQuota", repo.monthlyRunQuota ?? "", { type: "number", min: "0", placeholder: "no limit" }),
    budgetInput: input("monthlyBudget", repo.monthlyBudgetUsd ?? "", { placeholder: "no limit" }),
    draft: checkbox("draftPullRequests", repo.draftPullRequests),
    testIssues: checkbox("fileTestIssues", repo.fileTestIssues),
    overflow: checkbox("overflowToE2b", repo.overflowToE2b),
    automatic: checkbox("automaticUpdates", repo.automaticUpdates),
    instructions,
  };
}

/**
 * What a repository's settings form says, as the application layer reads a change.
 * @param {HTMLFormElement} form
 * @param {ReturnType<typeof repoFormControls>} controls
 * @returns {import("./contract.js").RepoSettingsInput}
 */
function readRepoForm(form, controls) {
  const data = new FormData(form);
  const text = (name) => String(data.get(name) ?? "");
  const quotaText = text("monthlyRunQuota").trim();
  return {
    defaultBranch: text("defaultBranch"),
    feedbackLabel: text("feedbackLabel"),
    customInstructions: text("customInstructions"),
    monthlyRunQuota: quotaText === "" ? null : Number(quotaText),
    sandboxBackend: text("sandboxBackend"),
    agentPreset: text("agentPreset"),
    agentCommand: text("agentCommand"),
    dockerImage: text("dockerImage"),
    e2bTemplate: text("e2bTemplate"),
    runTimeoutMinutes: text("runTimeoutMinutes"),
    networkMode: String(data.get("networkMode") ?? "allowlist"),
    allowedHosts: controls.allowedHosts.value,
    draftPullRequests: controls.draft.checked,
    fileTestIssues: controls.testIssues.checked,
    runSlots: text("runSlots"),
    overflowToE2b: controls.overflow.checked,
    automaticUpdates: controls.automatic.checked,
    automaticAttemptsPerDay: text("automaticAttemptsPerDay"),
    pullRequestLabels: text("pullRequestLabels"),
    pullRequestReviewers: text("pullRequestReviewers"),
    environmentKeyFiles: text("environmentKeyFiles"),
    pushFork: text("pushFork"),
    monthlyBudget: text("monthlyBudget"),
  };
}

/**
 * The settings form's fields, in the order the owner reads them.
 * @param {import("./contract.js").RepoSettingsView} view
 * @param {ReturnType<typeof repoFormControls>} c
 */
function repoFormGrid(view, c) {
  const repo = view.repo;
  const quota = view.quota;
  return el("div", { class: "form-grid" }, [
    field("Base branch", input("defaultBranch", repo.defaultBranch)),
    field("Feedback label", input("feedbackLabel", repo.feedbackLabel)),
    field("Runs per month", c.quotaInput, quota.quota == null ? `(${quota.used} used, no limit)` : `(${quota.used} used, ${quota.left} left)`),
    field("Budget per month ($)", c.budgetInput, "(runs are refused once it is spent)"),
    field("Sandbox", c.backendSelect),
    field("Runs at once", input("runSlots", repo.runSlots ?? "", { type: "number", placeholder: "no limit of its own" }), "(its own slots in the run queue; the installation's hold too)"),
    el("label", { class: "check-field" }, [c.overflow, el("span", { text: "Send runs to E2B when Docker is full" }), el("span", { class: "hint", text: "needs the E2B key; the run's record says where it went" })]),
    field("Agent", c.agent),
    c.commandField,
    field("Docker image", input("dockerImage", repo.dockerImage, { placeholder: view.defaultDockerImage }), "(empty: Handoff's own)"),
    field("E2B template", input("e2bTemplate", repo.e2bTemplate, { placeholder: "base" })),
    field("Time limit of a run (minutes)", input("runTimeoutMinutes", String(Math.round(repo.runTimeoutSeconds / 60)), { type: "number" }), "(a run still going then is stopped, keeping its spend)"),
    field("Network in the sandbox", c.networkSelect),
    field("Allowed hosts", c.allowedHosts, "(one per line: host, host:port, *.domain, an address of your own network, or name=address:port for a mirror there)"),
    el("label", { class: "check-field" }, [c.draft, el("span", { text: "Open PRs as drafts" }), el("span", { class: "hint", text: "so neither people nor CI take the agent's work as ready" })]),
    el("label", { class: "check-field" }, [c.automatic, el("span", { text: "Update PRs by themselves" }), el("span", { class: "hint", text: "when a check of a feedback PR fails; never a fork's, a bot's or a draft you marked (a @handoff comment asks for more)" })]),
    field("Automatic updates a day", input("automaticAttemptsPerDay", repo.automaticAttemptsPerDay, { type: "number" }), "(per PR; the same failure twice in a row stops them)"),
    el("label", { class: "check-field" }, [c.testIssues, el("span", { text: "File an issue per failing test" }), el("span", { class: "hint", text: "off: the test stage's failures stay in its results comment" })]),
    field("Labels on its PRs", input("pullRequestLabels", repo.pullRequestLabels.join(", "), { placeholder: "comma-separated" }), "(put on each PR Handoff opens)"),
    field("Reviewers to request", input("pullRequestReviewers", repo.pullRequestReviewers.join(", "), { placeholder: "login, org/team" }), "(asked to review each PR Handoff opens)"),
    field("Environment also keyed on", input("environmentKeyFiles", repo.environmentKeyFiles.join(", "), { placeholder: "requirements/dev.in, tools/versions.txt" }), "(besides its recipe and the usual lockfiles: a change to one on the base branch builds the environment again)"),
    field("Push branches to a fork", input("pushFork", repo.pushFork, { placeholder: "owner/name (empty: this repository)" }), "(one you may push to: its PRs run CI without the repository's secrets)"),
  ]);
}

/**
 * A repository's settings form, saved whole; `saved` runs after a save.
 * @param {import("./contract.js").RepoSettingsView} view
 * @param {string} fullName
 * @param {() => Promise<void>} saved
 */
export function repoSettingsForm(view, fullName, saved) {
  const form = el("form", { class: "repo-form", dataset: { repo: fullName } });
  const controls = repoFormControls(view);
  const errorLine = el("p", { class: "form-error" });
  errorLine.hidden = true;
  // Choosing the local backend (or changing what it runs) is confirmed in a dialog the
  // operating system draws, which the Rust side shows; the page only hears the outcome.
  const save = async () => {
    errorLine.hidden = true;
    try {
      await backend.saveRepoSettings(fullName, readRepoForm(form, controls));
      toast(`Saved ${fullName}`, { kind: "success" });
      await saved();
    } catch (error) {
      if (error.code === "needs_confirmation") controls.backendSelect.value = view.repo.sandboxBackend;
      errorLine.hidden = false;
      errorLine.textContent = error.message;
    }
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    save();
  });
  form.append(
    repoFormGrid(view, controls),
    controls.agentNote,
    field("Instructions for the agent (every run)", controls.instructions),
    errorLine,
    el("div", { class: "modal-actions" }, [el("button", { type: "submit", class: "button primary save-repo", text: "Save settings" })]),
  );
  controls.showAgent();
  controls.showNetwork();
  return form;
}

/**
 * A repository's stage prompts, each with its Save and Reset; `redraw` draws the
 * settings again after either.
 * @param {import("./contract.js").RepoSettingsView} view
 * @param {string} fullName
 * @param {() => Promise<void>} redraw
 */
export function stagePromptBoxes(view, fullName, redraw) {
  const prompts = el("div", { class: "stage-prompts" });
  for (const prompt of view.stagePrompts) {
    const text = el("textarea", {
      class: "stage-prompt",
      attrs: { rows: "5", name: `prompt-${prompt.stage}`, spellcheck: "false", "aria-label": `The ${prompt.stage} stage's prompt` },
    });
    text.value = prompt.template;
    const reset = button("Reset to default", async () => {
      try {
        await backend.setStagePrompt(fullName, prompt.stage, null);
        toast(`The ${prompt.stage} prompt is the default again`);
        await redraw();
      } catch (error) {
        errorToast(error);
      }
    }, "button small quiet");
    reset.disabled = !prompt.isOwn;
    const save = button("Save prompt", async () => {
      try {
        await backend.setStagePrompt(fullName, prompt.stage, text.value);
        toast(`Saved the ${prompt.stage} prompt`, { kind: "success" });
        await redraw();
      } catch (error) {
        errorToast(error);
      }
    }, "button small");
    prompts.append(el("div", { class: "stage-prompt-box", dataset: { stage: prompt.stage } }, [
      el("div", { class: "stage-prompt-head" }, [
        el("strong", { text: prompt.stage }),
        el("span", { class: "badge", text: prompt.isOwn ? "your own" : "default" }),
        save,
        reset,
      ]),
      text,
    ]));
  }
  return prompts;
}
