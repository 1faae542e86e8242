// The one place the page talks to the Rust side. Every call returns data or throws an
// error object {code, message}; the page acts on codes, never on message text.

const tauri = window.__TAURI__;

function asCodedError(error) {
  if (error && typeof error === "object" && typeof error.code === "string") {
    return error;
  }
  return { code: "internal", message: String(error) };
}

async function call(command, args) {
  try {
    return await tauri.core.invoke(command, args);
  } catch (error) {
    throw asCodedError(error);
  }
}

export const backend = {
  appInfo: () => call("app_info"),
  windowPainted: () => call("window_painted"),
  dashboard: (query) => call("dashboard", { query }),
  repos: () => call("repos"),
  feedbackDetail: (feedbackId) => call("feedback_detail", { feedbackId }),
  addFeedback: (input) => call("add_feedback", { input }),
  addFollowUp: (feedbackId, text) => call("add_follow_up", { feedbackId, text }),
  includeFollowUp: (followUpId) => call("include_follow_up", { followUpId }),
  approveFeedback: (feedbackId) => call("approve_feedback", { feedbackId }),
  approveCommentVersion: (versionId) => call("approve_comment_version", { versionId }),
  startRun: (feedbackId, instructions) => call("start_run", { feedbackId, instructions }),
  cancelRun: (runId) => call("cancel_run", { runId }),
  heldCommits: (runId) => call("held_commits", { runId }),
  pushHeldRun: (runId, endSha) => call("push_held_run", { runId, endSha }),
  followRunLog: (runId, onChunk) => {
    const channel = new tauri.core.Channel();
    channel.onmessage = onChunk;
    return call("follow_run_log", { runId, onChunk: channel });
  },
  previewMarkdown: (text) => call("preview_markdown", { text }),
  previewEdit: (text, agentOriginal) => call("preview_edit", { text, agentOriginal }),
  commentHistory: (repo, prNumber, kind) => call("comment_history", { repo, prNumber, kind }),
  compareVersions: (first, second) => call("compare_versions", { first, second }),
  pullRequestList: (query) => call("pull_request_list", { query }),
  openWorkspace: (repo, number, refresh) => call("open_workspace", { repo, number, refresh }),
  startQaStage: (repo, number, stage, force) => call("start_qa_stage", { repo, number, stage, force }),
  outboxItems: () => call("outbox_items"),
  sendOutboxEntry: (entryId) => call("send_outbox_entry", { entryId }),
  discardOutboxEntry: (entryId) => call("discard_outbox_entry", { entryId }),
  openWorkspacePullRequest: (repo, number) => call("open_workspace_pull_request", { repo, number }),
  saveComment: (repo, prNumber, kind, content, basedOn) =>
    call("save_comment", { repo, prNumber, kind, content, basedOn }),
  resolveCommentConflict: (entryId, keepMine) => call("resolve_comment_conflict", { entryId, keepMine }),
  sessionStatus: () => call("session_status"),
  signIn: (token, apiBase) => call("sign_in", { token, apiBase }),
  startDeviceSignIn: (apiBase, clientId) => call("start_device_sign_in", { apiBase, clientId }),
  finishDeviceSignIn: (flowId) => call("finish_device_sign_in", { flowId }),
  cancelDeviceSignIn: (flowId) => call("cancel_device_sign_in", { flowId }),
  signOut: () => call("sign_out"),
  keyStates: () => call("key_states"),
  setKey: (name, value) => call("set_key", { name, value }),
  removeKey: (name) => call("remove_key", { name }),
  checkSetup: () => call("check_setup"),
  buildAgentImage: (preset, onLine) => {
    const channel = new tauri.core.Channel();
    channel.onmessage = onLine;
    return call("build_agent_image", { preset, onLine: channel });
  },
  repositoryChoices: (search) => call("repository_choices", { search }),
  connectRepository: (fullName) => call("connect_repository", { fullName }),
  repoSettings: (fullName) => call("repo_settings", { fullName }),
  saveRepoSettings: (fullName, input) => call("save_repo_settings", { fullName, input }),
  setStagePrompt: (fullName, stage, template) => call("set_stage_prompt", { fullName, stage, template }),
  disconnectRepository: (fullName) => call("disconnect_repository", { fullName }),
  syncNow: () => call("sync_now"),
  openPullRequest: (feedbackId) => call("open_pull_request", { feedbackId }),
  openLink: (url) => call("open_link", { url }),
  logView: () => call("log_view"),
  setLogLevel: (level) => call("set_log_level", { level }),
  openLogFolder: () => call("open_log_folder"),
  onMirrorChanged: (handler) => tauri.event.listen("mirror-changed", handler),
  onMirrorFollowing: (handler) => tauri.event.listen("mirror-following", (event) => handler(event.payload)),
  onSecondLaunch: (handler) => tauri.event.listen("second-launch", handler),
  onRunEvent: (handler) => tauri.event.listen("run-event", (event) => handler(event.payload)),
  onOpenTarget: (handler) => tauri.event.listen("open-target", (event) => handler(event.payload)),
};
