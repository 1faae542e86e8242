// @ts-check
// What the window offers for an error's fix (the step that gets past it): one button,
// keyed on the fix's kind, that does what the command line's hint for the same fix
// says to type. An error with no fix the window can act on gets no button here.

/** @type {{openSettings: (tab: string, options?: object) => void, signIn: () => void, openDetail: (feedbackId: number) => void, sync: () => void}} */
let hooks = {
  openSettings: () => {},
  signIn: () => {},
  openDetail: () => {},
  sync: () => {},
};

export function configureFixActions(withHooks) {
  hooks = { ...hooks, ...withHooks };
}

/**
 * The button for `fix`, if the window has one.
 * @param {import("./contract.js").Fix | null | undefined} fix
 * @returns {{label: string, run: () => void} | null}
 */
export function fixAction(fix) {
  switch (fix?.kind) {
    case "sign_in":
    case "grant_token_permission":
      return { label: "Sign in", run: () => hooks.signIn() };
    case "connect_repository":
      return { label: "Repositories", run: () => hooks.openSettings("repositories") };
    case "build_environment":
      return { label: "Environment", run: () => hooks.openSettings("repositories", { repo: fix.repo, focus: "environment" }) };
    case "raise_quota":
    case "confirm_local_backend":
    case "choose_another_agent":
      return { label: "Repository settings", run: () => hooks.openSettings("repositories", { repo: fix.repo }) };
    case "raise_monthly_budget":
      return { label: "Budgets", run: () => hooks.openSettings("spend", { repo: fix.repo }) };
    case "raise_day_budget":
    case "run_stages_one_at_a_time":
      return { label: "Budgets", run: () => hooks.openSettings("spend") };
    case "add_key":
      return { label: `Add the ${fix.provider} key`, run: () => hooks.openSettings("keys", { focus: fix.provider }) };
    case "add_e2b_key":
    case "replace_e2b_key":
      return { label: "E2B key", run: () => hooks.openSettings("keys", { focus: "e2b" }) };
    case "start_keyring":
    case "start_docker":
    case "build_image":
    case "load_image":
    case "free_disk":
    case "install_egress_gate":
    case "use_https_for_e2b":
    case "use_https_for_provider":
    case "get_write_access":
    case "turn_on_issues":
    case "make_agent_fork":
      return { label: "Check setup", run: () => hooks.openSettings("setup") };
    case "sync_pull_requests":
      return { label: "Sync", run: () => hooks.sync() };
    case "approve_feedback":
      return { label: "Read it", run: () => hooks.openDetail(fix.feedback_id) };
    default:
      return null;
  }
}
