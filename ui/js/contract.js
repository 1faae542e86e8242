// @ts-check
// The page's contract: what the window's commands take and give, and what its
// events carry. Generated from the records in api/src by
// `cargo nextest run -p handoff-api page_contract_file` (which rewrites this file
// when it is stale): do not edit by hand.
//
// Errors always arrive as a CodedError: {code, message, fix}.

/**
 * An agent the settings offer.
 * @typedef {{ name: string, keyProvider: string | null, package: string, limitation: string | null, }} AgentOption
 */

/**
 * One model call of a run.
 * @typedef {{ model: string, beganAt: string, durationMs: number, status: number, inputTokens: number, cacheReadTokens: number, cacheWriteTokens: number, outputTokens: number, costUsd: number | null, toolCalls: Array<ToolCallRecord>, text: string, detailsLeftOut: boolean, usageUnread: boolean, }} AgentStepRecord
 */

/**
 * Where the app keeps its data, for the About box and error screens.
 * @typedef {{ version: string, dataDir: string, database: string, }} AppInfo
 */

/**
 * @typedef {"closed" | "dismissed" | "archived"} ArchiveState
 */

/**
 * @typedef {"pending" | "started" | "skipped" | "stopped"} AutomaticDecision
 */

/**
 * @typedef {"check_failed" | "changes_requested"} AutomaticTrigger
 */

/**
 * What a sync decided about one reason to update a PR by itself, for a toast or a
 * notification.
 * @typedef {{ feedbackId: number, decision: AutomaticDecision, reason: string, runId: number | null, }} AutomaticUpdateNote
 */

/**
 * A reason the item's PR had to update by itself, and what became of it.
 * @typedef {{ id: number, trigger: AutomaticTrigger, subject: string, prNumber: number, decision: AutomaticDecision, reason: string | null, runId: number | null, createdAt: string, }} AutomaticUpdateRecord
 */

/**
 * A newer version the feed offers.
 * @typedef {{ version: string, published: string | null, notesHtml: string, }} AvailableUpdate
 */

/**
 * One feedback card.
 * @typedef {{ feedbackId: number, publicId: string, title: string, repo: string, status: FeedbackStatus, source: FeedbackSource, headBranch: string, prNumber: number | null, prUrl: string | null, prState: PullRequestState | null, ownerFollowUpCount: number, visitorFollowUpCount: number, runCount: number, totalCostUsd: number, lastRun: LastRunRecord | null, archivedAs: ArchiveState | null, conflictsWithBase: boolean, ciRunsWithSecrets: boolean, createdAt: string, updatedAt: string, }} BoardCard
 */

/**
 * One status column of the board.
 * @typedef {{ status: FeedbackStatus, label: string, cards: Array<BoardCard>, total: number, }} BoardGroup
 */

/**
 * The board: feedback cards grouped by status.
 * @typedef {{ groups: Array<BoardGroup>, total: number, }} BoardView
 */

/**
 * The budgets as the window sends them: empty text is no limit, except for the run,
 * where it is the default ($5) and `none` is no limit.
 * @typedef {{ runUsd: string, runTokens: string, dayUsd: string, ownPrices: string, claudePlan: string, planPastCredit: string, }} BudgetSettingsInput
 */

/**
 * The budgets and prices as the window edits them: amounts as typed, empty for no
 * limit.
 * @typedef {{ runUsd: string, runTokens: string, dayUsd: string, ownPrices: string, prices: Array<PriceRecord>, pricesChecked: string, claudePlan: string, planPastCredit: string, }} BudgetSettingsView
 */

/**
 * What asking for runs of several items did: each item queued or refused.
 * @typedef {{ queued: Array<QueuedItemRecord>, refused: Array<RefusedItemRecord>, }} BulkRunRecord
 */

/**
 * One line of a comparison between two texts.
 * @typedef {{ change: LineChange, text: string, }} ChangedLineRecord
 */

/**
 * @typedef {"success" | "failure" | "pending" | "none"} CheckStatus
 */

/**
 * A CI entry point a held run's commits change, and why it is one.
 * @typedef {{ path: string, why: string, }} CiEntryPointRecord
 */

/**
 * @typedef {"first" | "iterate" | "retry"} CodeRunKind
 */

/**
 * An error as every command of the page may throw it: the code to act on, the message
 * to show, and the step past it, if there is one.
 * @typedef {{ code: ErrorCode, message: string, fix: Fix | null, }} CodedError
 */

/**
 * @typedef {"review" | "plan" | "results" | "followups"} CommentKind
 */

/**
 * One stage's comment as an editable pane.
 * @typedef {{ kind: CommentKind, writtenByStage: Stage, readByStage: Stage | null, header: string, version: CommentVersionRecord | null, versions: number, content: string, contentHtml: string, agentOriginal: string | null, changesFromAgent: Array<ChangedLineRecord>, writtenBy: string | null, editedByYou: boolean, awaitsApproval: boolean, missing: boolean, unsent: Array<UnsentEdit>, }} CommentPane
 */

/**
 * A managed comment of the item's PR, as the panel lists it.
 * @typedef {{ kind: CommentKind, version: number, versionId: number, origin: VersionOrigin, writtenBy: string, awaitsApproval: boolean, contentHtml: string, contentRaw: RevealedText, missing: boolean, }} CommentSummary
 */

/**
 * One version of a managed comment.
 * @typedef {{ id: number, managedCommentId: number, number: number, body: string, content: string, fullContent: string | null, origin: VersionOrigin, authorLogin: string | null, runId: number | null, basedOn: number | null, createdAt: string, editedByOther: boolean, approvedAt: string | null, }} CommentVersionRecord
 */

/**
 * Both texts of a conflict.
 * @typedef {{ entryId: number, mine: string, mineHtml: string, theirs: string, theirsHtml: string, changes: Array<ChangedLineRecord>, }} ConflictView
 */

/**
 * One line of a correction's diff.
 * @typedef {{ change: string, text: string, }} CorrectionLine
 */

/**
 * A correction of the owner's, as a lesson's source.
 * @typedef {{ id: string, words: string, lines: Array<CorrectionLine>, text: string, createdAt: string, }} CorrectionRecord
 */

/**
 * What the daemon is doing, as `serve.json` keeps it.
 * @typedef {{ pid: number, startedAt: string, lastSyncAt: string | null, lastSync: string | null, driving: Array<number>, stopping: boolean, }} DaemonState
 */

/**
 * The dashboard's filter as the UI sends it: an empty repository or status means "all".
 * @typedef {{ repo: string, status: FeedbackStatus | null, search: string, cardsPerColumn: number | null, archived: boolean, }} DashboardQuery
 */

/**
 * One day of the month.
 * @typedef {{ day: string, costUsd: number, tokens: number, runs: number, }} DaySpendRecord
 */

/**
 * What the window shows while the owner signs in on GitHub.
 * @typedef {{ flowId: number, userCode: string, verificationUri: string, expiresInSeconds: number, }} DeviceSignIn
 */

/**
 * A pane's text being edited: its preview, and its changes against the agent's
 * original (when there is one).
 * @typedef {{ html: string, changesFromAgent: Array<ChangedLineRecord>, }} EditPreview
 */

/**
 * One build of an environment, as the owner reads it.
 * @typedef {{ id: number, state: string, image: string, key: string, recipeFile: string, commit: string, imageBytes: number | null, failedStep: string | null, failure: string | null, runId: number | null, startedAt: string, finishedAt: string | null, logFile: string, }} EnvironmentBuildView
 */

/**
 * An environment image ready for runs, as `env build` reports it.
 * @typedef {{ image: string, imageBytes: number, builtNow: boolean, }} EnvironmentBuilt
 */

/**
 * A repository's environment, as the owner reads it.
 * @typedef {{ repo: string, baseBranch: string, commit: string, source: string, file: string | null, base: string, setupCommands: Array<string>, environmentVariables: Array<string>, features: Array<string>, notes: Array<string>, services: Array<string>, keyedOn: Array<string>, key: string | null, image: string | null, state: string | null, lastBuild: EnvironmentBuildView | null, testSettings: Array<TestSettingView>, }} EnvironmentRecord
 */

/**
 * @typedef {"invalid_input" | "not_found" | "already_exists" | "illegal_transition" | "run_active" | "merged" | "quota_exhausted" | "nothing_to_learn" | "budget_spent" | "data_folder" | "database_from_newer_version" | "database_damaged" | "database" | "database_locked" | "keyring" | "github_auth" | "github_forbidden" | "github_rate_limited" | "github_refused" | "github_unreachable" | "github_malformed_answer" | "owner_edits" | "awaits_approval" | "sandbox_unavailable" | "sandbox_failed" | "setup_incomplete" | "needs_confirmation" | "needs_sandbox" | "needs_client_id" | "agent_fork_refused" | "cancelled" | "update_unavailable" | "update_refused"} ErrorCode
 */

/**
 * An item with its thread, its runs and its PR's comments.
 * @typedef {{ feedback: FeedbackRecord, bodyHtml: string, bodyRaw: RevealedText, thread: Array<ThreadEntry>, runs: Array<RunRecord>, queuePlaces: Array<QueuePlaceRecord>, pushedHeldRuns: Array<number>, runLessons: Array<RunLessonsRecord>, comments: Array<CommentSummary>, nextRun: NextRun, automaticUpdates: Array<AutomaticUpdateRecord>, conflictsWithBase: boolean, }} FeedbackDetail
 */

/**
 * A feedback item.
 * @typedef {{ id: number, repoId: number, repo: RepoName, publicId: string, title: string, body: string, source: FeedbackSource, githubIssueNumber: number | null, githubIssueAuthor: string | null, status: FeedbackStatus, headBranch: string, prNumber: number | null, prUrl: string | null, prState: PullRequestState | null, openedByVisitor: boolean, approvedAt: string | null, archivedAs: ArchiveState | null, archivedAt: string | null, createdAt: string, updatedAt: string, }} FeedbackRecord
 */

/**
 * @typedef {"app" | "cli" | "github_issue"} FeedbackSource
 */

/**
 * @typedef {"NEW" | "CODING" | "WAITING_FOR_REVIEW" | "FAILED" | "MERGED"} FeedbackStatus
 */

/**
 * What gets the owner past a check that is not ok or an error (the window makes it a
 * button).
 * @typedef {{ "kind": "sign_in" } | { "kind": "get_write_access", repo: string, } | { "kind": "turn_on_issues", repo: string, } | { "kind": "start_keyring" } | { "kind": "start_docker" } | { "kind": "build_image", preset: string, image: string, } | { "kind": "load_image", image: string, } | { "kind": "build_environment", repo: string, } | { "kind": "add_key", provider: string, } | { "kind": "add_e2b_key" } | { "kind": "replace_e2b_key" } | { "kind": "use_https_for_e2b" } | { "kind": "use_https_for_provider", provider: string, } | { "kind": "choose_another_agent", repo: string, } | { "kind": "free_disk", path: string, } | { "kind": "install_egress_gate" } | { "kind": "grant_token_permission", permission: string, repo: string, } | { "kind": "make_agent_fork", repo: string, place: string | null, } | { "kind": "connect_repository", repo: string, } | { "kind": "raise_quota", repo: string, } | { "kind": "raise_monthly_budget", repo: string, } | { "kind": "raise_day_budget" } | { "kind": "run_stages_one_at_a_time", repo: string, } | { "kind": "install_newer_handoff" } | { "kind": "set_damaged_database_aside" } | { "kind": "try_again_later" } | { "kind": "look_up_items" } | { "kind": "look_up_runs" } | { "kind": "look_up_lessons" } | { "kind": "accept_lesson", id: number, } | { "kind": "sync_pull_requests" } | { "kind": "approve_feedback", feedback_id: number, } | { "kind": "approve_comment_version", comment: string, } | { "kind": "replace_owner_edit", comment: string, } | { "kind": "run_as_code_run" } | { "kind": "replace_lessons_file_edits" } | { "kind": "correct_the_agent_first" } | { "kind": "confirm_local_backend", repo: string, } | { "kind": "use_a_sandbox" } | { "kind": "show_run", run: number, }} Fix
 */

/**
 * @typedef {"thread" | "review" | "review_comment" | "check_run"} FollowUpOrigin
 */

/**
 * @typedef {"owner" | "visitor"} FollowUpSource
 */

/**
 * An organization the owner belongs to, as a place for forks.
 * @typedef {{ login: string, canCreateRepository: boolean, }} ForkPlaceRecord
 */

/**
 * Where a fork for the agent's branches may go.
 * @typedef {{ owner: string, organizations: Array<ForkPlaceRecord>, defaultPlace: string | null, }} ForkPlacesView
 */

/**
 * What a held run would push, as the page shows it before the owner approves.
 * @typedef {{ runId: number, branch: string, endSha: string, commits: number, changedPaths: Array<string>, ciEntryPoints: Array<CiEntryPointRecord>, diff: string, }} HeldCommitsRecord
 */

/**
 * What pushing a held run did.
 * @typedef {{ prNumber: number, prUrl: string, commits: number, }} HeldPushRecord
 */

/**
 * One version in a comment's history.
 * @typedef {{ versionId: number, number: number, origin: VersionOrigin, writtenBy: string, how: string, createdAt: string, runId: number | null, awaitsApproval: boolean, discarded: boolean, }} HistoryEntry
 */

/**
 * How the running app was installed, which says how an update is installed.
 * @typedef {"appImage" | "deb" | "other"} InstalledAs
 */

/**
 * One of the items that cost most.
 * @typedef {{ repo: string, feedbackId: number | null, prNumber: number | null, title: string | null, costUsd: number, tokens: number, runs: number, }} ItemSpendRecord
 */

/**
 * A key the window offers: whether it is set, never its value.
 * @typedef {{ name: string, label: string, set: boolean, forHost: string | null, optional: boolean, placeholder: string, }} KeyState
 */

/**
 * The latest run of a card.
 * @typedef {{ id: number, stage: Stage, status: RunStatus, startedAt: string | null, finishedAt: string | null, queuePlace: number | null, backend: SandboxBackend, insteadOf: SandboxBackend | null, }} LastRunRecord
 */

/**
 * What the owner decides, as the page sends it.
 * @typedef {"accept" | "reject" | "enable" | "disable" | "keep"} LessonDecisionWord
 */

/**
 * The owner's words for a lesson, as the page sends them (a field left out stays as it
 * is).
 * @typedef {{ rule: string | null, why: string | null, paths: Array<string> | null, }} LessonEditInput
 */

/**
 * A lesson as the window shows it.
 * @typedef {{ id: number, rule: string, why: string, paths: Array<string>, state: string, enabled: boolean, carried: boolean, origin: string, editedByOwner: boolean, proposedByRunId: number | null, decidedAt: string | null, lastCarriedAt: string | null, vanishedPaths: Array<string>, asksToKeep: boolean, sources: Array<CorrectionRecord>, ruleRaw: RevealedText, }} LessonRecord
 */

/**
 * A repository's lesson settings, as the page sends them.
 * @typedef {{ afterCorrections: number | null, lessonsFile: string, }} LessonSettingsInput
 */

/**
 * How "Write to AGENTS.md" ended.
 * @typedef {{ action: string, path: string, prNumber: number | null, prUrl: string | null, }} LessonsFileRecord
 */

/**
 * A repository's lessons.
 * @typedef {{ repo: string, proposals: Array<LessonRecord>, accepted: Array<LessonRecord>, rejected: Array<LessonRecord>, newCorrections: Array<CorrectionRecord>, activeRunId: number | null, lastRunId: number | null, lastRunWords: string | null, afterCorrections: number | null, lessonsFile: string, lessonsFilePrNumber: number | null, lessonsFilePrUrl: string | null, }} LessonsView
 */

/**
 * @typedef {"same" | "added" | "removed"} LineChange
 */

/**
 * A piece of a run's live log.
 * @typedef {{ runId: number, seq: number, stream: LogStream, at: string, text: string, }} LogChunkRecord
 */

/**
 * @typedef {"error" | "warn" | "info" | "debug" | "trace"} LogLevel
 */

/**
 * @typedef {"stdout" | "stderr" | "handoff"} LogStream
 */

/**
 * The log as the settings show it.
 * @typedef {{ folder: string, level: LogLevel, environmentFilter: string | null, lines: Array<string>, }} LogView
 */

/**
 * What changed in the mirror, sent with the window's "mirror changed" event so that the
 * page draws again only the cards, panel and lists it touches.
 * @typedef {{ feedbackIds: Array<number>, runIds: Array<number>, pullRequests: Array<PullRequestKeyRecord>, outbox: boolean, everything: boolean, }} MirrorChangesRecord
 */

/**
 * Whether the window follows the mirror's changes.
 * @typedef {{ following: boolean, problem: string | null, retryInSeconds: number | null, }} MirrorFollowing
 */

/**
 * A month's spend.
 * @typedef {{ month: string, repo: string | null, costUsd: number, tokens: number, unpricedTokens: number, runsWithoutCost: number, runs: number, budgetUsd: number | null, paidWithPlanUsd: number, days: Array<DaySpendRecord>, topItems: Array<ItemSpendRecord>, byModel: Array<PartSpendRecord>, byStage: Array<PartSpendRecord>, }} MonthSpendRecord
 */

/**
 * @typedef {"none" | "allowlist" | "open"} NetworkMode
 */

/**
 * A new feedback item from the app's form.
 * @typedef {{ repo: string, title: string, body: string, }} NewFeedbackInput
 */

/**
 * How many new items a repository holds, for "Run all new".
 * @typedef {{ repo: string, count: number, }} NewItemsRecord
 */

/**
 * What the run button does now.
 * @typedef {{ kind: NextRunKind, label: string, enabled: boolean, reason: string | null, quota: QuotaRecord, }} NextRun
 */

/**
 * Which run the run button starts.
 * @typedef {"first" | "iterate" | "retry" | "none"} NextRunKind
 */

/**
 * What clicking a notification opens.
 * @typedef {{ "kind": "pull_request", repo: string, number: number, } | { "kind": "feedback", id: number, } | { "kind": "lessons", repo: string, }} NotificationTarget
 */

/**
 * One waiting edit.
 * @typedef {{ entryId: number, state: OutboxState, repo: string, prNumber: number, kind: CommentKind, versionNumber: number | null, attempts: number, lastError: string | null, savedAt: string, nextAttemptAt: string, }} OutboxItem
 */

/**
 * @typedef {"pending" | "sent" | "conflict" | "failed"} OutboxState
 */

/**
 * @typedef {"api-key" | "claude-plan"} PaidWith
 */

/**
 * A model's or a stage's share.
 * @typedef {{ name: string, costUsd: number, tokens: number, }} PartSpendRecord
 */

/**
 * The owner's Claude plan this month: what the runs it paid for drew from its credit,
 * in API-equivalent dollars, on every repository (the credit is the account's).
 * @typedef {{ label: string, creditUsd: number, drawnUsd: number, stopsAtCredit: boolean, tokenKept: boolean, }} PlanMonthRecord
 */

/**
 * One row of the price table.
 * @typedef {{ model: string, input: number, output: number, cacheWrite: number, cacheRead: number, own: boolean, }} PriceRecord
 */

/**
 * A pull request named by its repository's id and its number.
 * @typedef {{ repoId: number, number: number, }} PullRequestKeyRecord
 */

/**
 * Whom a pull request was opened for.
 * @typedef {"feedback" | "other"} PullRequestOrigin
 */

/**
 * The list's filter as the UI sends it: an empty repository, checks or origin means
 * "all".
 * @typedef {{ repo: string, search: string, checks: CheckStatus | null, origin: PullRequestOrigin | null, }} PullRequestQuery
 */

/**
 * A pull request as the last sync mirrored it.
 * @typedef {{ repoId: number, repo: RepoName, number: number, title: string, authorLogin: string | null, headRef: string, headRepo: string | null, headSha: string, baseRef: string, state: PullRequestState, draft: boolean, checks: CheckStatus, githubUpdatedAt: string, syncedAt: string, feedbackId: number | null, }} PullRequestRecord
 */

/**
 * One row of the list.
 * @typedef {{ repoFullName: string, fromFork: boolean, checksUnreadable: boolean, repoId: number, repo: RepoName, number: number, title: string, authorLogin: string | null, headRef: string, headRepo: string | null, headSha: string, baseRef: string, state: PullRequestState, draft: boolean, checks: CheckStatus, githubUpdatedAt: string, syncedAt: string, feedbackId: number | null, }} PullRequestRow
 */

/**
 * @typedef {"open" | "closed" | "merged"} PullRequestState
 */

/**
 * Where one queued run stands in the run queue (place 0: its turn came, it starts).
 * @typedef {{ runId: number, place: number, }} QueuePlaceRecord
 */

/**
 * The slots as typed; empty means the default (the installation) or none of its own
 * (a backend).
 * @typedef {{ installation: string, docker: string, e2b: string, local: string, }} QueueSlotsInput
 */

/**
 * The slots as they hold now.
 * @typedef {{ installation: number, installationDefault: number, docker: number | null, e2b: number | null, local: number | null, }} QueueSlotsRecord
 */

/**
 * One item's run, queued.
 * @typedef {{ feedbackId: number, runId: number, }} QueuedItemRecord
 */

/**
 * A repository's monthly run quota: `None` means no limit.
 * @typedef {{ quota: number | null, used: number, left: number | null, exhausted: boolean, }} QuotaRecord
 */

/**
 * One item that was not queued, and why.
 * @typedef {{ feedbackId: number, code: ErrorCode, message: string, }} RefusedItemRecord
 */

/**
 * `owner/name` of a repository.
 * @typedef {{ owner: string, name: string, }} RepoName
 */

/**
 * A connected (or disconnected) repository and its settings.
 * @typedef {{ id: number, name: RepoName, defaultBranch: string, feedbackLabel: string, customInstructions: string, monthlyRunQuota: number | null, monthlyBudgetUsd: number | null, sandboxBackend: SandboxBackend, agentPreset: string, agentCommand: string | null, dockerImage: string | null, runTimeoutSeconds: number, e2bTemplate: string | null, networkMode: NetworkMode, allowedHosts: Array<string>, draftPullRequests: boolean, fileTestIssues: boolean, runSlots: number | null, overflowToE2b: boolean, automaticUpdates: boolean, automaticAttemptsPerDay: number, pullRequestLabels: Array<string>, pullRequestReviewers: Array<string>, environmentKeyFiles: Array<string>, pushFork: string | null, createdAt: string, disconnectedAt: string | null, }} RepoRecord
 */

/**
 * A change of settings: `None` leaves a setting as it is.
 * @typedef {{ defaultBranch: string | null, feedbackLabel: string | null, customInstructions: string | null, monthlyRunQuota: number | null | null, sandboxBackend: string | null, agentPreset: string | null, agentCommand: string | null, dockerImage: string | null, e2bTemplate: string | null, runTimeoutMinutes: string | null, networkMode: string | null, allowedHosts: string | null, draftPullRequests: boolean | null, fileTestIssues: boolean | null, runSlots: string | null, overflowToE2b: boolean | null, automaticUpdates: boolean | null, automaticAttemptsPerDay: string | null, pullRequestLabels: string | null, pullRequestReviewers: string | null, environmentKeyFiles: string | null, pushFork: string | null, monthlyBudget: string | null, }} RepoSettingsInput
 */

/**
 * A repository's settings as the window shows them.
 * @typedef {{ repo: RepoRecord, fullName: string, quota: QuotaRecord, stagePrompts: Array<StagePromptView>, agents: Array<AgentOption>, defaultDockerImage: string, }} RepoSettingsView
 */

/**
 * A repository the signed-in account can see, for the "Connect" list.
 * @typedef {{ fullName: string, defaultBranch: string, private: boolean, canPush: boolean, description: string | null, connected: boolean, }} RepositoryChoice
 */

/**
 * A text as the agent would get it: escaped, with the parts the rendered view hides
 * marked.
 * @typedef {{ html: string, hiddenParts: Array<string>, }} RevealedText
 */

/**
 * @typedef {"pr_opened" | "pr_updated" | "run_failed" | "run_succeeded"} RunEventKind
 */

/**
 * @typedef {"abandoned" | "driving_panicked" | "stage_failed" | "store" | "github" | "no_base_branch" | "no_branch" | "edit_awaits_approval" | "push_rejected" | "push_refused" | "ci_change_awaits_approval" | "agent_failed" | "budget_reached" | "budget_spent" | "needs_sandbox" | "fix_cannot_push" | "no_changes" | "no_output" | "bad_lessons" | "no_results" | "protected_branch" | "rewritten_history" | "timed_out" | "bad_results" | "bundle" | "git_checkout" | "git_diff" | "git_fetch" | "log" | "pull_request" | "push" | "results" | "sandbox" | "workspace" | "environment" | "kept_copy_unusable" | "cancelled" | "output_too_large"} RunFailureCode
 */

/**
 * The owner's lessons one run's prompt carried.
 * @typedef {{ runId: number, rules: Array<string>, }} RunLessonsRecord
 */

/**
 * A run event as a notification: its title, its text, and what a click opens.
 * @typedef {{ title: string, target: NotificationTarget | null, id: number, runId: number, feedbackId: number | null, kind: RunEventKind, message: string, createdAt: string, }} RunNotice
 */

/**
 * An agent run, without what only the pipeline needs (sandbox id, commit ids).
 * @typedef {{ id: number, repoId: number, feedbackId: number | null, prNumber: number | null, parentRunId: number | null, stage: Stage, codeRunKind: CodeRunKind | null, backend: SandboxBackend, agentPreset: string, status: RunStatus, instructions: string | null, createdAt: string, startedAt: string | null, finishedAt: string | null, exitCode: number | null, failureCode: RunFailureCode | null, failureMessage: string | null, notes: Array<string>, llmCostUsd: number | null, tokensIn: number | null, tokensOut: number | null, spendSource: SpendSource | null, paidWith: PaidWith | null, unpricedTokens: number | null, headBranch: string | null, startedBecause: string | null, }} RunRecord
 */

/**
 * @typedef {"queued" | "running" | "succeeded" | "failed" | "cancelled"} RunStatus
 */

/**
 * @typedef {"docker" | "e2b" | "local"} SandboxBackend
 */

/**
 * How a save ended.
 * @typedef {"sent" | "queued" | "discarded" | "conflict"} SaveOutcome
 */

/**
 * What a save did.
 * @typedef {{ outcome: SaveOutcome, message: string, conflict: ConflictView | null, }} SaveResult
 */

/**
 * @typedef {{ signedIn: boolean, login: string | null, apiBase: string, deviceClientIdSet: boolean, connectedRepos: number, tokenWarning: string | null, tokenMayChangeWorkflows: boolean, }} SessionStatus
 */

/**
 * How one check of Check setup came out.
 * @typedef {"ok" | "warning" | "failure"} SetupCheckStatus
 */

/**
 * One check: what was checked, how it stands, and what fixes it.
 * @typedef {{ id: string, subject: string, status: SetupCheckStatus, detail: string, fix: Fix | null, fixSentence: string | null, }} SetupLine
 */

/**
 * Check setup's answer: a line per check.
 * @typedef {{ lines: Array<SetupLine>, status: SetupCheckStatus, }} SetupView
 */

/**
 * @typedef {"metered" | "reported"} SpendSource
 */

/**
 * The Spend tab: a month of one repository or of all, and the settings.
 * @typedef {{ month: MonthSpendRecord, repos: Array<string>, settings: BudgetSettingsView, plan: PlanMonthRecord | null, }} SpendView
 */

/**
 * @typedef {"code" | "review" | "plan" | "test" | "fix" | "full-auto" | "lessons"} Stage
 */

/**
 * One card of the stage strip.
 * @typedef {{ stage: Stage, state: StageState, stateWords: string, editedByYou: boolean, outOfDate: string | null, readsYourEdit: string | null, buttonLabel: string, buttonEnabled: boolean, hint: string, quotaUnits: number, lastRun: RunRecord | null, activeRunId: number | null, notes: Array<string>, }} StageCardView
 */

/**
 * One stage's prompt: the repository's own, or the default.
 * @typedef {{ stage: Stage, template: string, defaultTemplate: string, isOwn: boolean, }} StagePromptView
 */

/**
 * Where a QA stage stands.
 * @typedef {"running" | "failed" | "out_of_date" | "edited_by_you" | "done" | "not_run"} StageState
 */

/**
 * What a sync found, in counts.
 * @typedef {{ repos: number, newFeedback: number, newVisitorFollowUps: number, openPullRequests: number, newFollowUpCandidates: number, statusChanges: number, commentEditsFound: number, commentsMissing: number, outboxSent: number, errors: Array<string>, lessonsRunsStarted: Array<number>, automaticUpdates: Array<AutomaticUpdateNote>, commandsTaken: number, }} SyncSummary
 */

/**
 * One scenario of the latest test run.
 * @typedef {{ name: string, passed: boolean, evidenceHtml: string, issueNumber: number | null, issueUrl: string | null, }} TestResultRow
 */

/**
 * @typedef {{ runId: number, passed: number, failed: number, rows: Array<TestResultRow>, }} TestResultsView
 */

/**
 * One test-only setting, as the owner reads it.
 * @typedef {{ name: string, value: string, }} TestSettingView
 */

/**
 * One message of the thread.
 * @typedef {{ id: number, source: FollowUpSource, author: string | null, createdAt: string, bodyHtml: string, bodyRaw: RevealedText, origin: FollowUpOrigin, candidate: boolean, includedInPrompts: boolean, automatic: boolean, }} ThreadEntry
 */

/**
 * A tool call of a step.
 * @typedef {{ name: string, input: string, }} ToolCallRecord
 */

/**
 * An edit of a pane waiting in the outbox.
 * @typedef {{ entryId: number, state: OutboxState, attempts: number, lastError: string | null, }} UnsentEdit
 */

/**
 * What asking the feed found.
 * @typedef {{ currentVersion: string, available: AvailableUpdate | null, }} UpdateCheck
 */

/**
 * The key a build installs updates with: its minisign key id, and whether it is the
 * development key (anyone may sign with it: never a release's).
 * @typedef {{ id: string, development: boolean, }} UpdateKeyRecord
 */

/**
 * The Updates tab of Settings.
 * @typedef {{ currentVersion: string, installedAs: InstalledAs, feed: string | null, updateKey: UpdateKeyRecord, }} UpdateSettings
 */

/**
 * Two versions side by side.
 * @typedef {{ older: CommentVersionRecord, olderHtml: string, newer: CommentVersionRecord, newerHtml: string, changes: Array<ChangedLineRecord>, }} VersionComparison
 */

/**
 * @typedef {"agent" | "owner_in_handoff" | "edit_on_github"} VersionOrigin
 */

/**
 * Where a workspace's comments were read from.
 * @typedef {"github" | "local"} WorkspaceSource
 */

/**
 * Everything the workspace shows.
 * @typedef {{ repo: string, pull: PullRequestRecord, prUrl: string, fromFork: boolean, stages: Array<StageCardView>, panes: Array<CommentPane>, testResults: TestResultsView | null, quota: QuotaRecord, source: WorkspaceSource, note: string | null, }} WorkspaceView
 */

export {};
