//! Settings of this installation that are not secrets: the GitHub API base, the signed-in
//! login, the device-flow client id. (Secrets live in the OS keyring only.)

use super::error::StoreError;
use crate::areas::SettingRecords;

handoff_domain::stored_text_enum! {
    /// The settings there are.
    pub enum SettingKey as "setting" {
        /// The REST API base: `https://api.github.com`, `https://HOST/api/v3`, or a fake.
        GithubApiBase => "github.api_base",
        /// No longer read: the web base always follows the API base, so that nothing
        /// written into the database can send the token to another host.
        GithubWebBase => "github.web_base",
        /// The login the stored token belongs to (the repositories' owner).
        GithubLogin => "github.login",
        /// What GitHub said the stored token may do at sign-in: a classic token's
        /// scopes, or `fine-grained`.
        GithubTokenScopes => "github.token_scopes",
        /// The OAuth app client id for device-flow sign-in.
        GithubDeviceClientId => "github.device_client_id",
        /// The author name of the commits Handoff makes for the agent.
        AgentGitName => "agent.git_name",
        /// The author email of those commits.
        AgentGitEmail => "agent.git_email",
        /// The Docker image of repositories that name none.
        DockerDefaultImage => "docker.default_image",
        /// A random id of this installation (data folder), made on first use; it tells
        /// this installation's sandboxes from another's on a shared Docker engine.
        InstallationId => "installation.id",
        /// E2B's control-plane API base.
        E2bApiBase => "e2b.api_base",
        /// The address of a sandbox's envd: `{sandbox_id}`, `{port}`, `{domain}` are filled in.
        E2bEnvdUrl => "e2b.envd_url",
        /// The image agent images are built from, instead of each recipe's own (a local
        /// Debian image on a machine with no registry).
        AgentImageBase => "agent_image.base",
        /// A program agent images install as the agent instead of its package.
        AgentImageStandIn => "agent_image.stand_in",
        /// Where Anthropic's API is reached instead of `https://api.anthropic.com` (a
        /// company gateway, or a stand-in in tests); the agent's key is sent there.
        AnthropicApiBase => "provider.anthropic.api_base",
        /// Where OpenAI's API is reached instead of `https://api.openai.com`.
        OpenaiApiBase => "provider.openai.api_base",
        /// How much the log file says: error, warn, info (the default), debug or trace.
        LogLevel => "log.level",
        /// How many days a feedback item's working copy is kept after its last run (14
        /// by default; 0 keeps none, so every run makes a fresh copy).
        KeptCopyDays => "workspace.kept_copy_days",
        /// Where the app asks whether a newer version exists (a JSON update manifest over
        /// https, or http on this machine); unset, the app never asks.
        UpdateFeed => "updates.feed",
        /// Dollars one run may spend before its model calls are refused (5 by default;
        /// `none` for no limit).
        BudgetRunUsd => "budget.run_usd",
        /// Tokens one run may spend, besides the dollars (no limit by default).
        BudgetRunTokens => "budget.run_tokens",
        /// Dollars all runs together may spend per day (UTC); no limit by default.
        BudgetDayUsd => "budget.day_usd",
        /// The owner's model prices, over the defaults: `MODEL INPUT OUTPUT [CACHE_WRITE
        /// CACHE_READ]` in dollars per million tokens, entries separated by `;`.
        SpendPrices => "spend.prices",
        /// The owner's Claude plan (`pro`, `max-5x` or `max-20x`), whose monthly credit
        /// for headless runs the spend view shows the plan's runs against.
        ClaudePlan => "spend.claude_plan",
        /// What happens once the runs paid with the plan have drawn its monthly credit:
        /// `stop` (the default) refuses their next calls, `go-on` lets the account pay
        /// API rates.
        ClaudePlanPastCredit => "spend.claude_plan.past_credit",
        /// How many runs may go at once on this installation (by default one per core,
        /// from one to four).
        QueueSlots => "queue.slots",
        /// How many of them may be Docker sandboxes (no limit of its own by default).
        QueueSlotsDocker => "queue.slots.docker",
        /// How many may be E2B sandboxes (no limit of its own by default).
        QueueSlotsE2b => "queue.slots.e2b",
        /// How many may be local processes (no limit of its own by default).
        QueueSlotsLocal => "queue.slots.local",
        /// Where forks for the agent's branches go (an organization, or a second account
        /// of the owner's): a repository connected from then on gets its fork there.
        AgentForkPlace => "forks.place",
        /// How often the open window and the daemon sync with GitHub by themselves, in
        /// seconds (300 by default, at least 30): how soon a `@handoff` comment is seen.
        SyncIntervalSeconds => "sync.interval_seconds",
    }
}

impl SettingRecords<'_> {
    pub async fn setting(&self, key: SettingKey) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
                .bind(key.as_str())
                .fetch_optional(&self.store.pool)
                .await?,
        )
    }

    pub async fn set_setting(&self, key: SettingKey, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key.as_str())
        .bind(value)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// This installation's id (see [`SettingKey::InstallationId`]), made if missing.
    pub async fn installation_id(&self) -> Result<String, StoreError> {
        if let Some(id) = self.setting(SettingKey::InstallationId).await? {
            return Ok(id);
        }
        let made = handoff_domain::PublicFeedbackId::random()
            .as_str()
            .replace("fb-", "");
        sqlx::query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING")
            .bind(SettingKey::InstallationId.as_str())
            .bind(&made)
            .execute(&self.store.pool)
            .await?;
        Ok(self
            .setting(SettingKey::InstallationId)
            .await?
            .unwrap_or(made))
    }

    pub async fn remove_setting(&self, key: SettingKey) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM settings WHERE key = ?")
            .bind(key.as_str())
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }
}
