// @ts-check
// Settings → Updates: the version running and how it was installed, the update feed
// (nothing is asked until one is set), and a check that shows a newer version with its
// notes (rendered and sanitized by the Rust side) and a button that installs it. The
// package's signature is checked before anything changes; a refused one changes nothing
// and says why. Once installed, the new version runs after a restart, which the owner
// starts.

import { backend } from "./backend.js";
import { el, button, trustedHtml } from "./dom.js";
import { toast, errorToast } from "./toasts.js";

const installedWords = {
  appImage: "an AppImage (an update replaces the file)",
  deb: "the .deb package (an update installs a new package, which asks for the administrator's password)",
  other: "built from the sources (updates come the same way)",
};

/** @param {HTMLElement} panel */
export async function renderUpdates(panel) {
  const settings = await backend.updateSettings();
  const feed = el("input", {
    attrs: { id: "update-feed", name: "update-feed", type: "url", spellcheck: "false", placeholder: "https://…/latest.json" },
  });
  feed.value = settings.feed ?? "";
  // A check begun on the panel as it was drawn before keeps its place: its answer lands
  // in the same result, which this drawing carries over.
  const result = /** @type {HTMLElement | null} */ (panel.querySelector("#update-result"))
    ?? el("div", { class: "update-result", attrs: { id: "update-result", "aria-live": "polite" } });
  const save = button("Save", async () => {
    try {
      await backend.setUpdateFeed(feed.value);
      toast(feed.value.trim() ? "The update feed is saved" : "No update feed: the app never asks", { kind: "success" });
    } catch (error) {
      errorToast(error);
    }
  }, "button small save-update-feed");
  const check = button("Check for updates", async () => {
    check.disabled = true;
    result.replaceChildren(el("p", { class: "hint", text: "Asking the feed…" }));
    try {
      showCheck(result, await backend.checkForUpdate());
    } catch (error) {
      result.replaceChildren(el("p", { class: "update-problem", text: error.message }));
    } finally {
      check.disabled = false;
    }
  }, "button check-for-update");
  check.disabled = !settings.feed;
  const key = settings.updateKey;
  const trusted = el("p", {
    class: `update-key ${key.development ? "development" : "release"}`,
    text: key.development
      ? `This build installs updates signed with the development key (${key.id}), whose secret half is public in Handoff's repository for its tests: anyone could sign an update it takes. Use it only to try Handoff out; a release package trusts a release key.`
      : `This build installs only updates signed with the release key ${key.id}.`,
  });
  panel.replaceChildren(
    el("p", { text: `Handoff ${settings.currentVersion}, installed as ${installedWords[settings.installedAs] ?? settings.installedAs}.` }),
    trusted,
    el("label", { attrs: { for: "update-feed" }, text: "Update feed" }),
    el("div", { class: "update-feed-row" }, [feed, save]),
    el("p", { class: "hint", text: "The address of an update manifest (https). An update is installed only when its signature is the one built into this app." }),
    check,
    result,
  );
}

/**
 * @param {HTMLElement} result
 * @param {import("./contract.js").UpdateCheck} found
 */
function showCheck(result, found) {
  const available = found.available;
  if (!available) {
    result.replaceChildren(el("p", { class: "update-none", text: `Handoff ${found.currentVersion} is the newest version.` }));
    return;
  }
  const notes = trustedHtml(el("div", { class: "markdown update-notes" }), available.notesHtml);
  const install = button(`Install ${available.version}`, async () => {
    install.disabled = true;
    try {
      await backend.installUpdate(available.version);
      result.replaceChildren(
        el("p", { class: "update-installed", text: `Version ${available.version} is installed: it runs after a restart.` }),
        button("Restart now", () => backend.restartApp().catch(errorToast), "button primary restart-app"),
      );
    } catch (error) {
      install.disabled = false;
      result.append(el("p", { class: "update-problem", text: error.message }));
      errorToast(error);
    }
  }, "button primary install-update");
  result.replaceChildren(
    el("p", { class: "update-available", text: `Version ${available.version} is available (this is ${found.currentVersion}).` }),
    notes,
    install,
  );
}
