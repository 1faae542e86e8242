//! The fake E2B's templates, as E2B's description gives its template build API: a
//! template asked for by name (`POST /v3/templates`, again for a new build of the same
//! name), where each copy step's files go (`GET /templates/{id}/files/{hash}`, an
//! upload address outside the API that takes a tar archive and wants no key), the
//! build started with its steps (`POST /v2/templates/{id}/builds/{build}`) and its
//! state asked for (`.../status`, building at first, then ready or failed), looking a
//! name up, a template's builds, the list, and deleting one.
//!
//! It refuses what E2B refuses: no key, a name E2B's rules do not allow, both or
//! neither of `fromImage` and `fromTemplate`, a step of a kind E2B has no such step
//! for, a build started twice; a copy step whose files were never uploaded fails the
//! build at that step, as does one the test asks to fail. A sandbox starts only from
//! `base` or a template with a ready build.

use std::collections::HashMap;

use axum::body::Body;
use axum::http::{HeaderMap, Response, StatusCode};
use serde_json::{json, Value};

use super::{empty, error, json_answer, Shared};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeTemplate {
    pub id: String,
    pub name: String,
    pub builds: Vec<FakeTemplateBuild>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeTemplateBuild {
    pub id: String,
    /// `waiting` (asked for), `building`, `ready` or `error`.
    pub status: String,
    /// The body the build was started with.
    pub start: Option<Value>,
    /// What it ends as once asked for again: `None` ready, else the failed step's
    /// number and why.
    ending: Option<(String, String)>,
    log: Vec<String>,
}

/// The templates' part of the fake's state.
#[derive(Debug, Default)]
pub(super) struct TemplateState {
    templates: Vec<FakeTemplate>,
    /// Uploaded files by their hash (E2B keeps them for the team).
    files: HashMap<String, Vec<u8>>,
    uploads_with_a_key: usize,
    /// A `RUN` step holding this text fails the build.
    fail_step_holding: Option<String>,
    next: u64,
}

impl TemplateState {
    /// Whether a sandbox may start from `template` (a name or an id).
    pub(super) fn startable(&self, template: &str) -> bool {
        template == "base"
            || self.templates.iter().any(|known| {
                (known.name == template || known.id == template)
                    && known.builds.iter().any(|build| build.status == "ready")
            })
    }

    /// Build `build_id` of template `id`.
    fn build(&mut self, id: &str, build_id: &str) -> Option<&mut FakeTemplateBuild> {
        self.templates
            .iter_mut()
            .find(|known| known.id == id)
            .and_then(|known| known.builds.iter_mut().find(|build| build.id == build_id))
    }

    pub(super) fn templates(&self) -> Vec<FakeTemplate> {
        self.templates.clone()
    }

    pub(super) fn uploads_with_a_key(&self) -> usize {
        self.uploads_with_a_key
    }

    pub(super) fn fail_step_holding(&mut self, text: &str) {
        self.fail_step_holding = Some(text.to_owned());
    }
}

/// The upload address of files `hash` of template `id` (served without a key).
pub(super) fn upload(
    shared: &Shared,
    segments: &[&str],
    headers: &HeaderMap,
    body: &[u8],
) -> Response<Body> {
    let [id, hash] = segments else {
        return error(StatusCode::NOT_FOUND, "not found");
    };
    let mut state = shared.templates.lock().expect("templates");
    if !state.templates.iter().any(|known| known.id == *id) {
        return error(StatusCode::NOT_FOUND, "template not found");
    }
    let readable = tar::Archive::new(body)
        .entries()
        .map(|entries| entries.into_iter().all(|entry| entry.is_ok()))
        .unwrap_or(false);
    if body.is_empty() || !readable {
        return error(StatusCode::BAD_REQUEST, "the upload is not a tar archive");
    }
    if headers.contains_key("x-api-key") {
        state.uploads_with_a_key += 1;
    }
    state.files.insert((*hash).to_owned(), body.to_vec());
    empty(StatusCode::OK)
}

/// The template build API's answers; `None` for a path that is not one of them.
pub(super) fn route(
    shared: &Shared,
    api_base: &str,
    method: &str,
    segments: &[&str],
    query: &str,
    body: &[u8],
) -> Option<Response<Body>> {
    let mut state = shared.templates.lock().expect("templates");
    let request: Value = serde_json::from_slice(body).unwrap_or_default();
    Some(match (method, segments) {
        ("POST", ["v3", "templates"]) => request_build(&mut state, &request),
        ("GET", ["templates", id, "files", hash]) => {
            if !state.templates.iter().any(|known| known.id == *id) {
                return Some(error(StatusCode::NOT_FOUND, "template not found"));
            }
            let present = state.files.contains_key(*hash);
            let mut answer = json!({ "present": present });
            if !present {
                answer["url"] = json!(format!("{api_base}/uploads/{id}/{hash}"));
            }
            json_answer(StatusCode::CREATED, answer)
        }
        ("POST", ["v2", "templates", id, "builds", build]) => {
            start_build(&mut state, id, build, request)
        }
        ("GET", ["templates", id, "builds", build, "status"]) => {
            let offset = query
                .split('&')
                .find_map(|pair| pair.strip_prefix("logsOffset="))
                .and_then(|value| value.parse().ok())
                .unwrap_or(0);
            build_status(&mut state, id, build, offset)
        }
        ("GET", ["templates", "aliases", alias]) => {
            match state.templates.iter().find(|known| known.name == *alias) {
                Some(known) => json_answer(
                    StatusCode::OK,
                    json!({ "templateID": known.id, "public": false }),
                ),
                None => error(StatusCode::NOT_FOUND, "template alias not found"),
            }
        }
        ("GET", ["templates", id]) => match state.templates.iter().find(|known| known.id == *id) {
            Some(known) => json_answer(StatusCode::OK, with_builds(known)),
            None => error(StatusCode::NOT_FOUND, "template not found"),
        },
        ("GET", ["v2", "templates"]) => json_answer(
            StatusCode::OK,
            Value::Array(state.templates.iter().map(listed).collect()),
        ),
        ("DELETE", ["templates", id]) => {
            let before = state.templates.len();
            state.templates.retain(|known| known.id != *id);
            if state.templates.len() == before {
                error(StatusCode::NOT_FOUND, "template not found")
            } else {
                empty(StatusCode::NO_CONTENT)
            }
        }
        _ => return None,
    })
}

fn request_build(state: &mut TemplateState, request: &Value) -> Response<Body> {
    let Some(name) = request["name"].as_str().or(request["alias"].as_str()) else {
        return error(StatusCode::BAD_REQUEST, "a name is required");
    };
    let allowed = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !allowed {
        return error(
            StatusCode::BAD_REQUEST,
            "the name may hold only lower case letters, digits, dashes and underscores",
        );
    }
    state.next += 1;
    let build = FakeTemplateBuild {
        id: format!("00000000-0000-4000-8000-{:012}", state.next),
        status: "waiting".to_owned(),
        start: None,
        ending: None,
        log: Vec::new(),
    };
    let build_id = build.id.clone();
    let next = state.next;
    let index = match state.templates.iter().position(|known| known.name == name) {
        Some(index) => index,
        None => {
            state.templates.push(FakeTemplate {
                id: format!("tpl{next:06}"),
                name: name.to_owned(),
                builds: Vec::new(),
            });
            state.templates.len() - 1
        }
    };
    let template = &mut state.templates[index];
    template.builds.push(build);
    json_answer(
        StatusCode::ACCEPTED,
        json!({
            "templateID": template.id,
            "buildID": build_id,
            "public": false,
            "names": [name],
            "tags": [],
            "aliases": [name],
        }),
    )
}

fn start_build(
    state: &mut TemplateState,
    id: &str,
    build_id: &str,
    request: Value,
) -> Response<Body> {
    let from_image = request["fromImage"].as_str().map(str::to_owned);
    let from_template = request["fromTemplate"].as_str().map(str::to_owned);
    if from_image.is_some() == from_template.is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "exactly one of fromImage and fromTemplate is required",
        );
    }
    let steps = request["steps"].as_array().cloned().unwrap_or_default();
    if let Some(bad) = steps.iter().find(|step| {
        !matches!(
            step["type"].as_str(),
            Some("COPY" | "RUN" | "ENV" | "WORKDIR" | "USER")
        )
    }) {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("unknown step type {}", bad["type"]),
        );
    }
    let base_missing = from_template
        .as_deref()
        .is_some_and(|template| !state.startable(template));
    let failing = state.fail_step_holding.clone();
    let uploaded: Vec<bool> = steps
        .iter()
        .map(|step| {
            step["type"] != "COPY"
                || step["filesHash"]
                    .as_str()
                    .is_some_and(|hash| state.files.contains_key(hash))
        })
        .collect();
    let Some(build) = state.build(id, build_id) else {
        return error(StatusCode::NOT_FOUND, "build not found");
    };
    if build.status != "waiting" {
        return error(StatusCode::BAD_REQUEST, "the build has started already");
    }
    let count = steps.len();
    build.log.push(format!(
        "building from {}",
        from_image.or(from_template.clone()).unwrap_or_default()
    ));
    build.ending = base_missing.then(|| {
        (
            "base".to_owned(),
            format!(
                "the template {} was not found",
                from_template.unwrap_or_default()
            ),
        )
    });
    for (index, step) in steps.iter().enumerate() {
        if build.ending.is_some() {
            break;
        }
        let args: Vec<&str> = step["args"]
            .as_array()
            .map(|args| args.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        build.log.push(format!(
            "[{}/{count}] {} {}",
            index + 1,
            step["type"].as_str().unwrap_or_default(),
            args.join(" ")
        ));
        let number = (index + 1).to_string();
        if !uploaded[index] {
            build.ending = Some((number, "the step's files were not uploaded".to_owned()));
        } else if step["type"] == "RUN"
            && failing
                .as_deref()
                .is_some_and(|text| args.iter().any(|arg| arg.contains(text)))
        {
            build.ending = Some((number, "the command exited with code 1".to_owned()));
        }
    }
    build.status = "building".to_owned();
    build.start = Some(request);
    empty(StatusCode::ACCEPTED)
}

fn build_status(
    state: &mut TemplateState,
    id: &str,
    build_id: &str,
    offset: usize,
) -> Response<Body> {
    let Some(build) = state.build(id, build_id) else {
        return error(StatusCode::NOT_FOUND, "build not found");
    };
    let entries: Vec<Value> = build
        .log
        .iter()
        .skip(offset)
        .map(|message| json!({ "timestamp": "2026-12-05T00:00:00Z", "message": message, "level": "info" }))
        .collect();
    let mut answer = json!({
        "templateID": id,
        "buildID": build_id,
        "status": build.status,
        "logs": [],
        "logEntries": entries,
    });
    // Asked once while building (with its whole log), the build is over the next time.
    match build.status.as_str() {
        "building" => {
            build.status = if build.ending.is_some() {
                "error"
            } else {
                "ready"
            }
            .to_owned();
        }
        "error" => {
            let (step, message) = build.ending.clone().unwrap_or_default();
            answer["reason"] = json!({ "message": message, "step": step });
        }
        _ => {}
    }
    json_answer(StatusCode::OK, answer)
}

fn with_builds(template: &FakeTemplate) -> Value {
    json!({
        "templateID": template.id,
        "public": false,
        "aliases": [template.name],
        "names": [template.name],
        "createdAt": "2026-12-05T00:00:00Z",
        "updatedAt": "2026-12-05T00:00:00Z",
        "lastSpawnedAt": null,
        "spawnCount": 0,
        "builds": template.builds.iter().map(|build| json!({
            "buildID": build.id,
            "status": build.status,
            "createdAt": "2026-12-05T00:00:00Z",
            "updatedAt": "2026-12-05T00:00:00Z",
            "cpuCount": 2,
            "memoryMB": 512,
        })).collect::<Vec<_>>(),
    })
}

fn listed(template: &FakeTemplate) -> Value {
    let last = template.builds.last();
    json!({
        "templateID": template.id,
        "buildID": last.map(|build| build.id.clone()).unwrap_or_default(),
        "cpuCount": 2,
        "memoryMB": 512,
        "diskSizeMB": 1024,
        "public": false,
        "createdAt": "2026-12-05T00:00:00Z",
        "updatedAt": "2026-12-05T00:00:00Z",
        "createdBy": null,
        "lastSpawnedAt": null,
        "spawnCount": 0,
        "buildCount": template.builds.len(),
        "envdVersion": "0.2.0",
        "aliases": [template.name],
        "names": [template.name],
        "buildStatus": last.map(|build| build.status.clone()).unwrap_or_else(|| "waiting".to_owned()),
    })
}
