//! Building an E2B template through E2B's template build API, as its published
//! description gives it: the template asked for by name (`POST /v3/templates`), each
//! copy step's files uploaded where E2B says unless it has them
//! (`GET /templates/{id}/files/{hash}`, then a `PUT` of the archive to that address,
//! which is not E2B's API and gets no key), the build started with its steps
//! (`POST /v2/templates/{id}/builds/{build}`) and followed until it is ready or failed
//! (`GET /templates/{id}/builds/{build}/status`, its log entries passed on as they come).
//!
//! A template is ready when its name is known (`GET /templates/aliases/{name}`) and one
//! of its builds is (`GET /templates/{id}`). The repository's older templates are found
//! by their names (`GET /v2/templates`) and deleted.

use std::time::Duration;

use serde::Deserialize;

use super::template_recipe::{is_template_of, TemplateRecipe};
use super::{unavailable, E2bSandbox};
use crate::environment_image::EnvironmentBuildError;
use crate::SandboxError;
use handoff_domain::service_address::check_secret_address;

/// How often a build's state is asked for: E2B tells it only when asked.
const STATUS_EVERY: Duration = Duration::from_secs(1);
/// A build that is not over after this long is given up on.
const LONGEST_BUILD: Duration = Duration::from_secs(45 * 60);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestedBuild {
    #[serde(rename = "templateID")]
    template_id: String,
    #[serde(rename = "buildID")]
    build_id: String,
}

#[derive(Debug, Deserialize)]
struct FileUpload {
    present: bool,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BuildInfo {
    status: String,
    #[serde(default)]
    log_entries: Vec<LogEntry>,
    #[serde(default)]
    reason: Option<StatusReason>,
}

#[derive(Debug, Deserialize)]
struct LogEntry {
    message: String,
}

#[derive(Debug, Deserialize)]
struct StatusReason {
    message: String,
    #[serde(default)]
    step: Option<String>,
}

#[derive(Debug, Deserialize)]
struct AliasAnswer {
    #[serde(rename = "templateID")]
    template_id: String,
}

#[derive(Debug, Deserialize)]
struct TemplateBuilds {
    builds: Vec<BuildState>,
}

#[derive(Debug, Deserialize)]
struct BuildState {
    status: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedTemplate {
    #[serde(rename = "templateID")]
    template_id: String,
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    aliases: Vec<String>,
}

fn service(error: SandboxError) -> EnvironmentBuildError {
    EnvironmentBuildError::Service(error.to_string())
}

impl E2bSandbox {
    /// The sandbox whose runs start from the template `name`.
    pub fn with_template(mut self, name: &str) -> Self {
        self.settings.template = name.to_owned();
        self
    }

    /// The template runs start from.
    pub fn template(&self) -> &str {
        &self.settings.template
    }

    /// Whether the template `name` is there with a ready build.
    pub async fn template_is_ready(&self, name: &str) -> Result<bool, SandboxError> {
        let answer = self
            .send_to_e2b(
                reqwest::Method::GET,
                &format!("/templates/aliases/{name}"),
                None,
            )
            .await?;
        if answer.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(false);
        }
        let known: AliasAnswer = self.answer_of(answer, "looking the template up").await?;
        let builds: TemplateBuilds = self
            .ask_e2b(
                reqwest::Method::GET,
                &format!("/templates/{}", known.template_id),
                None,
                "listing the template's builds",
            )
            .await?;
        Ok(builds.builds.iter().any(|build| build.status == "ready"))
    }

    /// Builds `recipe` on E2B, each line of the build going to `progress`; a failed
    /// step is named as the recipe names it.
    pub async fn build_template(
        &self,
        recipe: &TemplateRecipe,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), EnvironmentBuildError> {
        for note in &recipe.notes {
            progress(&format!("note: {note}"));
        }
        progress(&format!("building the E2B template {}", recipe.name));
        let requested: RequestedBuild = self
            .ask_e2b(
                reqwest::Method::POST,
                "/v3/templates",
                Some(&serde_json::json!({ "name": recipe.name })),
                "asking for the template",
            )
            .await
            .map_err(service)?;
        for (hash, files) in &recipe.uploads {
            self.upload_files(&requested.template_id, hash, files, progress)
                .await?;
        }
        progress(&format!(
            "starting the build of {} steps on {}",
            recipe.step_names.len(),
            recipe.base
        ));
        self.ask_e2b::<serde::de::IgnoredAny>(
            reqwest::Method::POST,
            &format!(
                "/v2/templates/{}/builds/{}",
                requested.template_id, requested.build_id
            ),
            Some(&recipe.start),
            "starting the build",
        )
        .await
        .map_err(service)?;
        self.follow_build(recipe, &requested, progress).await
    }

    /// Deletes `repository`'s templates but `keep`; returns their names.
    pub async fn prune_templates(
        &self,
        repository: &str,
        keep: &str,
    ) -> Result<Vec<String>, SandboxError> {
        let listed: Vec<ListedTemplate> = self
            .ask_e2b(
                reqwest::Method::GET,
                "/v2/templates?limit=100",
                None,
                "listing the templates",
            )
            .await?;
        let mut removed = Vec::new();
        for template in listed {
            let mut names = template.names.iter().chain(&template.aliases);
            if names.clone().any(|name| name == keep) {
                continue;
            }
            let Some(name) = names.find(|name| is_template_of(name, repository)) else {
                continue;
            };
            self.ask_e2b::<serde::de::IgnoredAny>(
                reqwest::Method::DELETE,
                &format!("/templates/{}", template.template_id),
                None,
                "deleting an older template",
            )
            .await?;
            removed.push(name.clone());
        }
        Ok(removed)
    }

    /// Uploads one copy step's files unless E2B has them; the upload address is E2B's
    /// storage, which gets the archive and nothing else (no key).
    async fn upload_files(
        &self,
        template_id: &str,
        hash: &str,
        files: &[u8],
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), EnvironmentBuildError> {
        let upload: FileUpload = self
            .ask_e2b(
                reqwest::Method::GET,
                &format!("/templates/{template_id}/files/{hash}"),
                None,
                "asking where the files go",
            )
            .await
            .map_err(service)?;
        let short: String = hash.chars().take(12).collect();
        let url = match (upload.present, upload.url) {
            (true, _) => {
                progress(&format!("files {short} are on E2B already"));
                return Ok(());
            }
            (false, Some(url)) => url,
            (false, None) => {
                return Err(EnvironmentBuildError::Service(format!(
                    "E2B gave no address for the files {short}"
                )))
            }
        };
        check_secret_address(&url).map_err(|refusal| {
            EnvironmentBuildError::Service(format!("the files' upload address: {refusal}"))
        })?;
        let sent = self
            .http
            .put(&url)
            .body(files.to_vec())
            .send()
            .await
            .map_err(|error| EnvironmentBuildError::Service(self.describe(error)))?;
        if !sent.status().is_success() {
            return Err(EnvironmentBuildError::Service(format!(
                "the upload of the files {short} was refused ({})",
                sent.status()
            )));
        }
        progress(&format!("uploaded files {short} ({} bytes)", files.len()));
        Ok(())
    }

    /// Asks for the build's state until it is over, passing its log on.
    async fn follow_build(
        &self,
        recipe: &TemplateRecipe,
        requested: &RequestedBuild,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), EnvironmentBuildError> {
        let started = std::time::Instant::now();
        let mut offset = 0;
        loop {
            let info: BuildInfo = self
                .ask_e2b(
                    reqwest::Method::GET,
                    &format!(
                        "/templates/{}/builds/{}/status?logsOffset={offset}",
                        requested.template_id, requested.build_id
                    ),
                    None,
                    "asking for the build's state",
                )
                .await
                .map_err(service)?;
            offset += info.log_entries.len();
            for entry in &info.log_entries {
                progress(&format!("e2b: {}", entry.message));
            }
            match info.status.as_str() {
                "ready" => return Ok(()),
                "error" => {
                    let reason = info.reason.unwrap_or(StatusReason {
                        message: "E2B gave no reason".to_owned(),
                        step: None,
                    });
                    return Err(EnvironmentBuildError::Step {
                        step: step_named(recipe, reason.step.as_deref()),
                        detail: reason.message,
                    });
                }
                _ if started.elapsed() > LONGEST_BUILD => {
                    return Err(EnvironmentBuildError::Service(format!(
                        "the build was not over after {} minutes",
                        LONGEST_BUILD.as_secs() / 60
                    )))
                }
                _ => tokio::time::sleep(STATUS_EVERY).await,
            }
        }
    }

    /// A request to E2B's API, with the key.
    fn api_call(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> Result<reqwest::RequestBuilder, SandboxError> {
        let key = self.key()?;
        Ok(self
            .http
            .request(method, format!("{}{path}", self.settings.api_base))
            .header("X-API-Key", key.expose()))
    }

    /// Sends a request to E2B's API, with `body` as its JSON when there is one.
    async fn send_to_e2b(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<reqwest::Response, SandboxError> {
        let mut request = self.api_call(method, path)?;
        if let Some(body) = body {
            request = request.json(body);
        }
        request
            .send()
            .await
            .map_err(|error| unavailable(format!("cannot reach E2B: {}", self.describe(error))))
    }

    /// A request to E2B's API and its answer's body as `T` ([`Self::answer_of`]).
    async fn ask_e2b<T: serde::de::DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
        doing: &str,
    ) -> Result<T, SandboxError> {
        let answer = self.send_to_e2b(method, path, body).await?;
        self.answer_of(answer, doing).await
    }

    /// The answer's body as `T`, or what E2B said (cut and scrubbed).
    async fn answer_of<T: serde::de::DeserializeOwned>(
        &self,
        answer: reqwest::Response,
        doing: &str,
    ) -> Result<T, SandboxError> {
        let status = answer.status();
        let body = answer.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(super::failed(format!(
                "E2B refused {doing} ({status}): {}",
                self.excerpt(&body)
            )));
        }
        let body = if body.trim().is_empty() {
            "null"
        } else {
            &body
        };
        serde_json::from_str(body).map_err(|error| {
            super::failed(format!("E2B's answer to {doing} cannot be read: {error}"))
        })
    }
}

/// What E2B's failed step is called in the recipe: `base` is what the template starts
/// from, `N` the N-th step (E2B counts the start as 0).
fn step_named(recipe: &TemplateRecipe, step: Option<&str>) -> String {
    match step {
        Some("base") => recipe.base.clone(),
        Some(number) => number
            .parse::<usize>()
            .ok()
            .and_then(|number| number.checked_sub(1))
            .and_then(|index| recipe.step_names.get(index))
            .cloned()
            .unwrap_or_else(|| format!("step {number} of the E2B template build")),
        None => "the E2B template build".to_owned(),
    }
}
