// @ts-check
// The one place the page talks to the Rust side. Every call returns data or throws an
// error object {code, message, fix}; the page acts on codes and fixes, never on message
// text.
//
// Written by src-tauri/tests/it/page_backend.rs from src-tauri/src/commands/ and
// src-tauri/src/page_events.rs: do not edit; change those and run the test.

const tauri = window.__TAURI__;

/**
 * @param {unknown} error
 * @returns {import("./contract.js").CodedError}
 */
function asCodedError(error) {
  if (error && typeof error === "object" && typeof error.code === "string") {
    return { fix: null, ...error };
  }
  return { code: "internal", message: String(error), fix: null };
}

/**
 * Calls command `command` of the Rust side (each is named in src-tauri/src/command_names.rs).
 * @template T
 * @param {string} command
 * @param {Record<string, unknown>} [args]
 * @returns {Promise<T>}
 */
async function call(command, args) {
  try {
    return await tauri.core.invoke(command, args);
  } catch (error) {
    throw asCodedError(error);
  }
}

export const backend = {
  /** @returns {Promise<import("./contract.js").AppInfo>} */
  appInfo: () => call("app_info"),
  /** @returns {Promise<void>} */
  windowPainted: () => call("window_painted"),
  /** @param {import("./contract.js").DashboardQuery} query @returns {Promise<import("./contract.js").BoardView>} */
  dashboard: (query) => call("dashboard", { query }),
  /** @returns {Promise<import("./contract.js").RepoRecord[]>} */
  repos: () => call("repos"),
  /** @param {number} feedbackId @returns {Promise<import("./contract.js").FeedbackDetail>} */
  feedbackDetail: (feedbackId) => call("feedback_detail", { feedbackId }),
  /** @param {import("./contract.js").NewFeedbackInput} input @returns {Promise<import("./contract.js").FeedbackRecord>} */
  addFeedback: (input) => call("add_feedback", { input }),
  /** @param {number} feedbackId @param {string} text @returns {Promise<void>} */
  addFollowUp: (feedbackId, text) => call("add_follow_up", { feedbackId, text }),
  /** @param {number} followUpId @returns {Promise<void>} */
  includeFollowUp: (followUpId) => call("include_follow_up", { followUpId }),
  /** @param {number} feedbackId @returns {Promise<void>} */
  approveFeedback: (feedbackId) => call("approve_feedback", { feedbackId }),
  /** @param {number} versionId @returns {Promise<void>} */
  approveCommentVersion: (versionId) => call("approve_comment_version", { versionId }),
  /** @param {number} feedbackId @param {string | null} instructions @returns {Promise<number>} */
  startRun: (feedbackId, instructions) => call("start_run", { feedbackId, instructions }),
  /** @param {number} runId @returns {Promise<void>} */
  cancelRun: (runId) => call("cancel_run", { runId }),
  /** @param {number[]} feedbackIds @returns {Promise<import("./contract.js").BulkRunRecord>} */
  startCodeRuns: (feedbackIds) => call("start_code_runs", { feedbackIds }),
  /** @param {string} repo @returns {Promise<import("./contract.js").BulkRunRecord>} */
  runAllNew: (repo) => call("run_all_new", { repo }),
  /** @returns {Promise<import("./contract.js").NewItemsRecord[]>} */
  newItemsByRepo: () => call("new_items_by_repo"),
  /** @returns {Promise<import("./contract.js").QueueSlotsRecord>} */
  queueSlots: () => call("queue_slots"),
  /** @param {import("./contract.js").QueueSlotsInput} slots @returns {Promise<import("./contract.js").QueueSlotsRecord>} */
  setQueueSlots: (slots) => call("set_queue_slots", { slots }),
  /** @param {number} feedbackId @param {string} how @returns {Promise<import("./contract.js").FeedbackRecord>} */
  archiveItem: (feedbackId, how) => call("archive_item", { feedbackId, how }),
  /** @param {number} feedbackId @returns {Promise<import("./contract.js").FeedbackRecord>} */
  restoreItem: (feedbackId) => call("restore_item", { feedbackId }),
  /** @param {number} runId @returns {Promise<import("./contract.js").HeldCommitsRecord>} */
  heldCommits: (runId) => call("held_commits", { runId }),
  /** @param {number} runId @param {string} endSha @returns {Promise<import("./contract.js").HeldPushRecord>} */
  pushHeldRun: (runId, endSha) => call("push_held_run", { runId, endSha }),
  /** @param {number} runId @param {(message: import("./contract.js").LogChunkRecord) => void} onChunk @returns {Promise<void>} */
  followRunLog: (runId, onChunk) => {
    const channel = new tauri.core.Channel();
    channel.onmessage = onChunk;
    return call("follow_run_log", { runId, onChunk: channel });
  },
  /** @param {string} text @param {string | null} agentOriginal @returns {Promise<import("./contract.js").EditPreview>} */
  previewEdit: (text, agentOriginal) => call("preview_edit", { text, agentOriginal }),
  /** @param {string} repo @param {number} prNumber @param {string} kind @returns {Promise<import("./contract.js").HistoryEntry[]>} */
  commentHistory: (repo, prNumber, kind) => call("comment_history", { repo, prNumber, kind }),
  /** @param {number} first @param {number} second @returns {Promise<import("./contract.js").VersionComparison>} */
  compareVersions: (first, second) => call("compare_versions", { first, second }),
  /** @param {import("./contract.js").PullRequestQuery} query @returns {Promise<import("./contract.js").PullRequestRow[]>} */
  pullRequestList: (query) => call("pull_request_list", { query }),
  /** @param {string} repo @param {number} number @param {boolean} refresh @returns {Promise<import("./contract.js").WorkspaceView>} */
  openWorkspace: (repo, number, refresh) => call("open_workspace", { repo, number, refresh }),
  /** @param {string} repo @param {number} number @param {string} stage @param {boolean} force @returns {Promise<number>} */
  startQaStage: (repo, number, stage, force) => call("start_qa_stage", { repo, number, stage, force }),
  /** @returns {Promise<import("./contract.js").OutboxItem[]>} */
  outboxItems: () => call("outbox_items"),
  /** @param {number} entryId @returns {Promise<import("./contract.js").SaveResult>} */
  sendOutboxEntry: (entryId) => call("send_outbox_entry", { entryId }),
  /** @param {number} entryId @returns {Promise<void>} */
  discardOutboxEntry: (entryId) => call("discard_outbox_entry", { entryId }),
  /** @param {string} repo @param {number} prNumber @param {string} kind @param {string} content @param {number} basedOn @returns {Promise<import("./contract.js").SaveResult>} */
  saveComment: (repo, prNumber, kind, content, basedOn) => call("save_comment", { repo, prNumber, kind, content, basedOn }),
  /** @param {number} entryId @param {boolean} keepMine @returns {Promise<import("./contract.js").SaveResult>} */
  resolveCommentConflict: (entryId, keepMine) => call("resolve_comment_conflict", { entryId, keepMine }),
  /** @returns {Promise<import("./contract.js").DaemonState | null>} */
  daemonStatus: () => call("daemon_status"),
  /** @returns {Promise<import("./contract.js").SessionStatus>} */
  sessionStatus: () => call("session_status"),
  /** @param {string} token @param {string | null} apiBase @returns {Promise<import("./contract.js").SessionStatus>} */
  signIn: (token, apiBase) => call("sign_in", { token, apiBase }),
  /** @param {string | null} apiBase @param {string | null} clientId @returns {Promise<import("./contract.js").DeviceSignIn>} */
  startDeviceSignIn: (apiBase, clientId) => call("start_device_sign_in", { apiBase, clientId }),
  /** @param {number} flowId @returns {Promise<import("./contract.js").SessionStatus>} */
  finishDeviceSignIn: (flowId) => call("finish_device_sign_in", { flowId }),
  /** @param {number} flowId @returns {Promise<void>} */
  cancelDeviceSignIn: (flowId) => call("cancel_device_sign_in", { flowId }),
  /** @returns {Promise<import("./contract.js").SessionStatus>} */
  signOut: () => call("sign_out"),
  /** @returns {Promise<import("./contract.js").KeyState[]>} */
  keyStates: () => call("key_states"),
  /** @param {string} name @param {string} value @returns {Promise<import("./contract.js").KeyState[]>} */
  setKey: (name, value) => call("set_key", { name, value }),
  /** @param {string} name @returns {Promise<import("./contract.js").KeyState[]>} */
  removeKey: (name) => call("remove_key", { name }),
  /** @returns {Promise<import("./contract.js").SetupView>} */
  checkSetup: () => call("check_setup"),
  /** @param {string} preset @param {(message: string) => void} onLine @returns {Promise<string>} */
  buildAgentImage: (preset, onLine) => {
    const channel = new tauri.core.Channel();
    channel.onmessage = onLine;
    return call("build_agent_image", { preset, onLine: channel });
  },
  /** @param {string} search @returns {Promise<import("./contract.js").RepositoryChoice[]>} */
  repositoryChoices: (search) => call("repository_choices", { search }),
  /** @param {string} fullName @returns {Promise<import("./contract.js").RepoRecord>} */
  connectRepository: (fullName) => call("connect_repository", { fullName }),
  /** @param {string} fullName @returns {Promise<import("./contract.js").RepoSettingsView>} */
  repoSettings: (fullName) => call("repo_settings", { fullName }),
  /** @param {string} fullName @param {import("./contract.js").RepoSettingsInput} input @returns {Promise<import("./contract.js").RepoSettingsView>} */
  saveRepoSettings: (fullName, input) => call("save_repo_settings", { fullName, input }),
  /** @param {string} fullName @param {string} stage @param {string | null} template @returns {Promise<import("./contract.js").RepoSettingsView>} */
  setStagePrompt: (fullName, stage, template) => call("set_stage_prompt", { fullName, stage, template }),
  /** @returns {Promise<import("./contract.js").ForkPlacesView>} */
  forkPlaces: () => call("fork_places"),
  /** @param {string} fullName @param {string} place @returns {Promise<import("./contract.js").RepoSettingsView>} */
  makeAgentFork: (fullName, place) => call("make_agent_fork", { fullName, place }),
  /** @param {string} fullName @returns {Promise<void>} */
  disconnectRepository: (fullName) => call("disconnect_repository", { fullName }),
  /** @returns {Promise<import("./contract.js").SyncSummary>} */
  syncNow: () => call("sync_now"),
  /** @param {number} feedbackId @returns {Promise<void>} */
  openPullRequest: (feedbackId) => call("open_pull_request", { feedbackId }),
  /** @param {string} repo @param {number} number @returns {Promise<void>} */
  openWorkspacePullRequest: (repo, number) => call("open_workspace_pull_request", { repo, number }),
  /** @param {string} url @returns {Promise<void>} */
  openLink: (url) => call("open_link", { url }),
  /** @returns {Promise<import("./contract.js").LogView>} */
  logView: () => call("log_view"),
  /** @param {import("./contract.js").LogLevel} level @returns {Promise<void>} */
  setLogLevel: (level) => call("set_log_level", { level }),
  /** @returns {Promise<void>} */
  openLogFolder: () => call("open_log_folder"),
  /** @param {string | null} repo @returns {Promise<import("./contract.js").SpendView>} */
  spendView: (repo) => call("spend_view", { repo }),
  /** @param {import("./contract.js").BudgetSettingsInput} input @param {string | null} repo @returns {Promise<import("./contract.js").SpendView>} */
  saveBudgetSettings: (input, repo) => call("save_budget_settings", { input, repo }),
  /** @param {number} runId @returns {Promise<import("./contract.js").AgentStepRecord[]>} */
  runSteps: (runId) => call("run_steps", { runId }),
  /** @param {string} repo @returns {Promise<import("./contract.js").EnvironmentRecord>} */
  environmentView: (repo) => call("environment_view", { repo }),
  /** @param {string} repo @param {(message: string) => void} onLine @returns {Promise<import("./contract.js").EnvironmentBuilt | null>} */
  rebuildEnvironment: (repo, onLine) => {
    const channel = new tauri.core.Channel();
    channel.onmessage = onLine;
    return call("rebuild_environment", { repo, onLine: channel });
  },
  /** @param {string} repo @returns {Promise<string>} */
  environmentLog: (repo) => call("environment_log", { repo }),
  /** @param {string} repo @returns {Promise<import("./contract.js").TestSettingView[]>} */
  testSettings: (repo) => call("test_settings", { repo }),
  /** @param {string} repo @param {string} name @param {string} value @returns {Promise<import("./contract.js").TestSettingView[]>} */
  setTestSetting: (repo, name, value) => call("set_test_setting", { repo, name, value }),
  /** @param {string} repo @param {string} name @returns {Promise<import("./contract.js").TestSettingView[]>} */
  removeTestSetting: (repo, name) => call("remove_test_setting", { repo, name }),
  /** @param {string} repo @returns {Promise<import("./contract.js").LessonsView>} */
  lessonsView: (repo) => call("lessons_view", { repo }),
  /** @param {string} repo @returns {Promise<number>} */
  suggestLessons: (repo) => call("suggest_lessons", { repo }),
  /** @param {number} id @param {import("./contract.js").LessonDecisionWord} decision @returns {Promise<import("./contract.js").LessonRecord>} */
  decideLesson: (id, decision) => call("decide_lesson", { id, decision }),
  /** @param {number} id @param {import("./contract.js").LessonEditInput} input @returns {Promise<import("./contract.js").LessonRecord>} */
  editLesson: (id, input) => call("edit_lesson", { id, input }),
  /** @param {string} repo @param {boolean} replaceEdits @returns {Promise<import("./contract.js").LessonsFileRecord>} */
  writeLessonsFile: (repo, replaceEdits) => call("write_lessons_file", { repo, replaceEdits }),
  /** @param {string} repo @param {import("./contract.js").LessonSettingsInput} input @returns {Promise<void>} */
  setLessonSettings: (repo, input) => call("set_lesson_settings", { repo, input }),
  /** @returns {Promise<import("./contract.js").UpdateSettings>} */
  updateSettings: () => call("update_settings"),
  /** @param {string} address @returns {Promise<import("./contract.js").UpdateSettings>} */
  setUpdateFeed: (address) => call("set_update_feed", { address }),
  /** @returns {Promise<import("./contract.js").UpdateCheck>} */
  checkForUpdate: () => call("check_for_update"),
  /** @param {string} version @returns {Promise<void>} */
  installUpdate: (version) => call("install_update", { version }),
  /** @returns {Promise<void>} */
  restartApp: () => call("restart_app"),
  /** @param {(payload: import("./contract.js").MirrorChangesRecord) => void} handler @returns {Promise<() => void>} */
  onMirrorChanged: (handler) => tauri.event.listen("mirror-changed", (event) => handler(event.payload)),
  /** @param {(payload: import("./contract.js").MirrorFollowing) => void} handler @returns {Promise<() => void>} */
  onMirrorFollowing: (handler) => tauri.event.listen("mirror-following", (event) => handler(event.payload)),
  /** @param {() => void} handler @returns {Promise<() => void>} */
  onSecondLaunch: (handler) => tauri.event.listen("second-launch", () => handler()),
  /** @param {(payload: import("./contract.js").RunNotice) => void} handler @returns {Promise<() => void>} */
  onRunEvent: (handler) => tauri.event.listen("run-event", (event) => handler(event.payload)),
  /** @param {(payload: import("./contract.js").NotificationTarget) => void} handler @returns {Promise<() => void>} */
  onOpenTarget: (handler) => tauri.event.listen("open-target", (event) => handler(event.payload)),
};
