// @ts-check
// Where a repository's agent branches go, in its settings: to a fork, whose PRs run CI
// without the repository's secrets (GitHub's rule for forks), or to the repository
// itself, where CI runs the agent's code with them, drafts too; and the one click that
// makes (or finds) a fork and waits until GitHub has it ready. GitHub does not let an
// account fork its own repository into itself, so the fork goes to an organization the
// owner belongs to, or to a second account of theirs that made the fork itself.

import { backend } from "./backend.js";
import { el, button } from "./dom.js";
import { toast, errorToast } from "./toasts.js";

const ANOTHER_ACCOUNT = "";

/**
 * Draws the agent branches of `fullName` into `box`; `afterFork` runs once a fork is made.
 * @param {HTMLElement} box
 * @param {string} fullName
 * @param {import("./contract.js").RepoRecord} repo
 * @param {() => Promise<void>} afterFork
 */
export async function renderAgentBranches(box, fullName, repo, afterFork) {
  box.classList.toggle("with-fork", Boolean(repo.pushFork));
  box.classList.toggle("same-repository", !repo.pushFork);
  if (repo.pushFork) {
    box.replaceChildren(
      el("strong", { text: "Agent branches go to a fork" }),
      el("p", { class: "agent-branches-state", text: `Handoff pushes the agent's branches to ${repo.pushFork}: their PRs run CI without ${fullName}'s secrets.` }),
    );
    return;
  }
  const state = el("p", {
    class: "agent-branches-state",
    text: `Agent branches go to ${fullName} itself, so CI runs the agent's code with the repository's secrets (drafts too).`,
  });
  const why = el("p", {
    class: "hint",
    text: "A fork's PRs run CI without them. GitHub does not let an account fork its own repository into itself: the fork goes to an organization you belong to, or to a second account of yours — a machine account, an ordinary GitHub account kept for automation — that makes the fork itself and gives you write access.",
  });
  const place = el("select", { class: "fork-place", attrs: { name: "forkPlace", "aria-label": "Where the fork goes" } });
  const account = el("input", {
    class: "fork-account",
    attrs: { type: "text", spellcheck: "false", placeholder: "second account's login", "aria-label": "The second account that made the fork" },
  });
  const status = el("span", { class: "fork-status muted", attrs: { role: "status" } });
  const make = button("Make a fork for the agent", async () => {
    const chosen = place.value === ANOTHER_ACCOUNT ? account.value.trim() : place.value;
    if (!chosen) {
      status.textContent = "Say where the fork goes.";
      return;
    }
    make.disabled = true;
    status.textContent = `Making the fork in ${chosen}; GitHub may take a moment…`;
    try {
      const settings = await backend.makeAgentFork(fullName, chosen);
      toast(`Agent branches of ${fullName} go to ${settings.repo.pushFork}`, { kind: "success" });
      await afterFork();
    } catch (error) {
      make.disabled = false;
      status.textContent = error.message;
      errorToast(error);
    }
  }, "button small primary make-agent-fork");
  const showAccount = () => {
    account.hidden = place.value !== ANOTHER_ACCOUNT;
  };
  place.addEventListener("change", showAccount);
  box.replaceChildren(
    el("strong", { text: "Agent branches run CI with the repository's secrets" }),
    state,
    why,
    el("div", { class: "fork-controls" }, [place, account, make, status]),
  );
  try {
    const places = await backend.forkPlaces();
    const usable = places.organizations.filter((org) => org.canCreateRepository);
    for (const org of usable) place.append(new Option(`the organization ${org.login}`, org.login, false, org.login === places.defaultPlace));
    for (const org of places.organizations.filter((org) => !org.canCreateRepository)) {
      const option = new Option(`${org.login} (no new repositories for you there)`, org.login);
      option.disabled = true;
      place.append(option);
    }
    const other = new Option("a second account of yours…", ANOTHER_ACCOUNT);
    place.append(other);
    if (places.defaultPlace && !usable.some((org) => org.login === places.defaultPlace)) {
      other.selected = true;
      account.value = places.defaultPlace;
    }
  } catch (error) {
    place.append(new Option("a second account of yours…", ANOTHER_ACCOUNT));
    status.textContent = error.code === "github_auth" ? "Sign in to GitHub to list your organizations." : error.message;
  }
  showAccount();
}

/**
 * Check setup's button for a repository whose branches need a fork: one click makes (or
 * finds) it in the place the owner has, else it opens the repository's settings there.
 * @param {{ repo: string, place: string | null }} fix
 * @param {() => Promise<void>} afterFork
 * @param {() => Promise<void>} openRepository
 */
export function forkFixButton(fix, afterFork, openRepository) {
  const { repo, place } = fix;
  if (!place) return button("Choose where to fork", openRepository, "button small fix-make-fork");
  const make = button(`Make a fork in ${place}`, async () => {
    make.disabled = true;
    try {
      toast(`Making the fork of ${repo} in ${place}; GitHub may take a moment…`);
      const settings = await backend.makeAgentFork(repo, place);
      toast(`Agent branches of ${repo} go to ${settings.repo.pushFork}`, { kind: "success" });
      await afterFork();
    } catch (error) {
      errorToast(error);
    } finally {
      make.disabled = false;
    }
  }, "button small fix-make-fork");
  return make;
}
