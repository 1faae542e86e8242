// @ts-check
// A repository's environment, in its settings: the recipe its base branch names (a dev
// container, .handoff/setup.sh, or none: the agent image alone), where its image stands
// (not built, building, ready, failed at a named step, or built for files that changed
// since), the image's name and size, the files it is keyed on, its setup commands, the
// services its tests reach by name (.handoff/services.yml) and what Handoff leaves out; the last build's log; Rebuild, which follows the
// build line by line; and the repository's test-only settings (test_settings.js). A recipe that cannot be built shows what is wrong and where.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { toast, errorToast } from "./toasts.js";
import { testSettingsSection } from "./test_settings.js";

/** How many draws began: a draw whose answer comes after a later one began draws nothing. */
let draws = 0;

const STATE_WORDS = {
  not_built: "Not built yet: the next run builds it, or Rebuild now.",
  building: "Building…",
  ready: "Ready: runs start in it with nothing to build.",
  failed: "The last build failed: runs fail before their agent starts until it builds.",
  stale: "Out of date: a file it is keyed on changed on the base branch; the next run builds it again.",
};

/** @param {HTMLElement} container @param {string} repo */
export async function renderEnvironment(container, repo) {
  const draw = ++draws;
  let view = null;
  let refusal = null;
  try {
    view = await backend.environmentView(repo);
  } catch (error) {
    refusal = error;
  }
  if (draw !== draws || !container.isConnected) return;
  const head = el("div", { class: "environment-head" }, [
    el("h3", { text: "Environment" }),
    view?.key ? rebuildButton(container, repo) : null,
  ]);
  if (!view) {
    container.replaceChildren(head, el("p", { class: "environment-error", dataset: { code: refusal?.code ?? "internal" }, text: refusal?.message ?? String(refusal) }), testSettingsSection(repo));
    return;
  }
  const parts = [
    head,
    el("p", { class: "hint", text: "What the agent works in: the dev container or .handoff/setup.sh on the base branch, with Handoff's agent layer on top, and the services of .handoff/services.yml beside it; built on this machine's Docker engine once for what it is made of, on the network its runs get." }),
    facts(view),
    view.lastBuild ? lastBuild(view.lastBuild, repo) : null,
    testSettingsSection(repo),
  ];
  container.replaceChildren(...parts.filter((part) => part !== null));
}

function facts(view) {
  const rows = [
    ["Found", view.file ?? "nothing: runs use Handoff's agent image"],
    ["Starts as", view.base],
  ];
  if (view.image) rows.push(["Image", view.image + (view.lastBuild?.imageBytes != null && view.state === "ready" ? ` (${megabytes(view.lastBuild.imageBytes)})` : "")]);
  const list = el("dl", { class: "environment-facts" });
  for (const [label, value] of rows) list.append(el("dt", { text: label }), el("dd", { class: label === "Image" ? "mono environment-image" : undefined, text: value }));
  const lists = [
    ["Features", "environment-features", view.features],
    ["Setup", "environment-setup", view.setupCommands],
    ["Services", "environment-services", view.services],
    ["Variables", "environment-variables", view.environmentVariables],
    ["Keyed on", "environment-keyed-on", view.keyedOn],
    ["Left out", "environment-notes", view.notes],
  ];
  for (const [label, className, items] of lists) {
    if (!items.length) continue;
    list.append(el("dt", { text: label }), el("dd", {}, [el("ul", { class: className }, items.map((item) => el("li", { class: className === "environment-keyed-on" ? "mono" : undefined, text: item })))]));
  }
  return el("div", { class: "environment-status" }, [
    view.state ? el("p", { class: "environment-state", dataset: { state: view.state }, text: STATE_WORDS[view.state] ?? view.state }) : null,
    list,
  ]);
}

function lastBuild(build, repo) {
  const when = new Date(build.finishedAt ?? build.startedAt).toLocaleString();
  const words = build.state === "failed"
    ? `Build ${build.id} failed at ${build.failedStep}: ${build.failure}`
    : build.state === "ready"
      ? `Build ${build.id} made ${build.image} (${megabytes(build.imageBytes ?? 0)}), ${when}${build.runId != null ? `, for run ${build.runId}` : ""}`
      : `Build ${build.id} began ${when}`;
  const log = el("pre", { class: "environment-log build-log", attrs: { "aria-label": `Log of environment build ${build.id}` } });
  const details = el("details", { class: "environment-last-build" }, [
    el("summary", { class: "environment-build-words", dataset: { state: build.state }, text: words }),
    log,
  ]);
  details.addEventListener("toggle", async () => {
    if (!details.open || log.textContent) return;
    try {
      log.textContent = await backend.environmentLog(repo);
    } catch (error) {
      log.textContent = error.message;
    }
  });
  return details;
}

function rebuildButton(container, repo) {
  const go = button("Rebuild", async () => {
    go.disabled = true;
    const state = container.querySelector(".environment-state");
    if (state) {
      state.dataset.state = "building";
      state.textContent = STATE_WORDS.building;
    }
    const log = el("pre", { class: "environment-log build-log environment-live-log", attrs: { "aria-label": "The environment's build, as it goes" } });
    container.append(log);
    try {
      const built = await backend.rebuildEnvironment(repo, (line) => {
        log.append(line + "\n");
        log.scrollTop = log.scrollHeight;
      });
      if (built) toast(`Built ${built.image} (${megabytes(built.imageBytes)})`, { kind: "success" });
    } catch (error) {
      errorToast(error);
    }
    await renderEnvironment(container, repo);
  }, "button small primary rebuild-environment");
  go.title = "Builds the image again from the base branch, even when one with the same key is ready";
  return go;
}

function megabytes(bytes) {
  return `${Math.round(bytes / 1_000_000)} MB`;
}
