// @ts-check
// A repository's test-only settings, in its Environment: the variables its tests read
// in the agent's sandbox (say DATABASE_URL for a test service), each shown with its
// value and marked test-only, removable, and a form to add one. They are no secrets:
// the agent sees them. The shell refuses a name that carries a credential (the GitHub
// token, a provider's key) and a value that holds a secret Handoff keeps; the refusal
// is shown beside the form, and nothing is kept of it.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { input } from "./form_fields.js";
import { errorToast } from "./toasts.js";

/** The section for `repo`, which fills itself. @param {string} repo @returns {HTMLElement} */
export function testSettingsSection(repo) {
  const section = el("section", { class: "test-settings", attrs: { "aria-label": "Test-only settings" } });
  load(section, repo);
  return section;
}

/** @param {HTMLElement} section @param {string} repo */
async function load(section, repo) {
  try {
    draw(section, repo, await backend.testSettings(repo));
  } catch (error) {
    section.replaceChildren(el("p", { class: "environment-error", dataset: { code: error?.code ?? "internal" }, text: error?.message ?? String(error) }));
  }
}

/**
 * @param {HTMLElement} section @param {string} repo
 * @param {import("./contract.js").TestSettingView[]} settings
 */
function draw(section, repo, settings) {
  const list = el("ul", { class: "test-setting-list" }, settings.map((setting) => el("li", { class: "test-setting", dataset: { name: setting.name } }, [
    el("span", { class: "mono test-setting-name", text: setting.name }),
    el("span", { class: "mono test-setting-value", text: setting.value }),
    el("span", { class: "badge test-only", text: "test-only", title: "Given to the agent's sandbox for the tests; the agent can read it" }),
    button("Remove", async () => {
      try {
        draw(section, repo, await backend.removeTestSetting(repo, setting.name));
      } catch (error) {
        errorToast(error);
      }
    }, "button small remove-test-setting", `Remove ${setting.name}`),
  ])));
  const name = input("testSettingName", "", { placeholder: "DATABASE_URL", "aria-label": "Name of a test-only setting" });
  const value = input("testSettingValue", "", { placeholder: "postgres://postgres:test@db/app", "aria-label": "Its value" });
  const refusal = el("p", { class: "test-setting-refusal environment-error", attrs: { role: "alert" } });
  refusal.hidden = true;
  const form = el("form", { class: "test-setting-form" }, [name, value, el("button", { type: "submit", class: "button small", text: "Add" })]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      draw(section, repo, await backend.setTestSetting(repo, name.value, value.value));
    } catch (error) {
      refusal.hidden = false;
      refusal.dataset.code = error?.code ?? "internal";
      refusal.textContent = error?.message ?? String(error);
    }
  });
  section.replaceChildren(
    el("h4", { text: "Test-only settings" }),
    el("p", { class: "hint", text: "Variables the project's tests read in the agent's sandbox, such as the address of a test service. They are not secrets: the agent can read them, and they are withheld from a run on someone else's work. The GitHub token and providers' keys are refused." }),
    settings.length ? list : el("p", { class: "hint empty-test-settings", text: "None." }),
    form,
    refusal,
  );
}
