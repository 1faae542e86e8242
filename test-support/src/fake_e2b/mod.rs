//! A fake E2B for the tests: its control-plane REST API (create, get, timeout, kill a
//! sandbox) and each sandbox's envd (health, file upload and download, and
//! `process.Process/Start` streamed with Connect framing and keepalives), following the
//! descriptions in test-support/specs/e2b. A sandbox is a folder; the commands it is given
//! really run (locally, with that folder as `$HOME`). Templates are built as E2B's
//! template build API says ([`templates`]).

mod templates;
pub use templates::{FakeTemplate, FakeTemplateBuild};

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::http::{HeaderMap, Method, Request, Response, StatusCode};
use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::AsyncReadExt as _;

#[derive(Debug, Clone)]
pub struct FakeSandbox {
    pub id: String,
    pub template: String,
    pub home: PathBuf,
    /// Asked for as secured (`secure: true`): its envd then takes only calls carrying
    /// its access token, and only such a sandbox is given one.
    pub secure: bool,
    pub access_token: String,
    pub timeout_seconds: u64,
    pub killed: bool,
    pub process_groups: Vec<u32>,
    pub metadata: Value,
    /// The egress settings it was created with (`network`), as sent.
    pub network: Value,
    pub allow_internet_access: Option<bool>,
}

/// One request the fake answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct E2bRequest {
    pub method: String,
    pub path: String,
    pub status: u16,
    /// The `Connect-Timeout-Ms` header, on process starts.
    pub connect_timeout_ms: Option<String>,
}

struct Shared {
    api_key: String,
    root: PathBuf,
    sandboxes: Mutex<HashMap<String, FakeSandbox>>,
    next: Mutex<u64>,
    requests: Mutex<Vec<E2bRequest>>,
    keepalive_every: Mutex<Duration>,
    hang_next_process: Mutex<bool>,
    /// Answers as an E2B that makes no secured sandboxes would: no access token.
    ignores_secure: Mutex<bool>,
    /// The body the next creation is refused with (status 500), if set.
    refuse_next_creation: Mutex<Option<String>>,
    templates: Mutex<templates::TemplateState>,
}

pub struct FakeE2b {
    shared: Arc<Shared>,
    address: SocketAddr,
    server: tokio::task::JoinHandle<()>,
    _root: tempfile::TempDir,
}

impl Drop for FakeE2b {
    fn drop(&mut self) {
        self.server.abort();
        for sandbox in self.shared.sandboxes.lock().expect("sandboxes").values() {
            for group in &sandbox.process_groups {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", "--", &format!("-{group}")])
                    .status();
            }
        }
    }
}

fn error(status: StatusCode, message: &str) -> Response<Body> {
    json_answer(
        status,
        json!({ "code": status.as_u16(), "message": message }),
    )
}

fn json_answer(status: StatusCode, value: Value) -> Response<Body> {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        "application/json".parse().expect("a header"),
    );
    response
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

fn query_path(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == "path").then(|| value.replace("%2F", "/").replace("%20", " "))
    })
}

fn envelope(flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut framed = vec![flags];
    framed.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    framed.extend_from_slice(payload);
    framed
}

impl FakeE2b {
    /// Starts the fake; `api_key` is the only key it accepts.
    pub async fn start(api_key: &str) -> FakeE2b {
        let root = tempfile::tempdir().expect("a folder for sandboxes");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("an address");
        let shared = Arc::new(Shared {
            api_key: api_key.to_owned(),
            root: root.path().to_owned(),
            sandboxes: Mutex::new(HashMap::new()),
            next: Mutex::new(0),
            requests: Mutex::new(Vec::new()),
            keepalive_every: Mutex::new(Duration::from_millis(500)),
            hang_next_process: Mutex::new(false),
            ignores_secure: Mutex::new(false),
            refuse_next_creation: Mutex::new(None),
            templates: Mutex::new(Default::default()),
        });
        let app = axum::Router::new().fallback({
            let shared = shared.clone();
            move |request| handle(shared.clone(), request)
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeE2b {
            shared,
            address,
            server,
            _root: root,
        }
    }

    pub fn api_base(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The envd address template Handoff is to use with this fake.
    pub fn envd_url_template(&self) -> String {
        format!("http://{}/envd/{{sandbox_id}}", self.address)
    }

    /// Ids of sandboxes not killed yet.
    pub fn live_sandboxes(&self) -> Vec<String> {
        self.shared
            .sandboxes
            .lock()
            .expect("sandboxes")
            .values()
            .filter(|sandbox| !sandbox.killed)
            .map(|sandbox| sandbox.id.clone())
            .collect()
    }

    pub fn sandboxes(&self) -> Vec<FakeSandbox> {
        self.shared
            .sandboxes
            .lock()
            .expect("sandboxes")
            .values()
            .cloned()
            .collect()
    }

    /// The headers E2B's egress would add to a request the sandbox `id` sends to `host`
    /// (the name the request was made for) over `scheme`, as E2B's description tells
    /// it: a rule applies to HTTP and HTTPS requests to the domain it is keyed on, and
    /// only to traffic `allowOut`/`denyOut` let out at all ("a domain listed here is not
    /// automatically allowed"). The description does not say how the domain is matched
    /// (by SNI, by the Host field, by address): this fake matches the name the request
    /// was made for, exactly.
    pub fn egress_headers(&self, id: &str, scheme: &str, host: &str) -> Vec<(String, String)> {
        let sandboxes = self.shared.sandboxes.lock().expect("sandboxes");
        let Some(sandbox) = sandboxes.get(id) else {
            return Vec::new();
        };
        if !matches!(scheme, "http" | "https") {
            return Vec::new();
        }
        let network = &sandbox.network;
        let listed = |key: &str| {
            network[key]
                .as_array()
                .map(|entries| {
                    entries
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        let allowed = listed("allowOut").iter().any(|entry| {
            entry == host
                || entry
                    .strip_prefix("*.")
                    .is_some_and(|domain| host.ends_with(&format!(".{domain}")))
        });
        let denied_everywhere = listed("denyOut").iter().any(|entry| entry == "0.0.0.0/0");
        if denied_everywhere && !allowed {
            return Vec::new();
        }
        network["rules"][host]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|rule| rule["transform"]["headers"].as_object())
            .flat_map(|headers| {
                headers.iter().map(|(name, value)| {
                    (name.clone(), value.as_str().unwrap_or_default().to_owned())
                })
            })
            .collect()
    }

    pub fn requests(&self) -> Vec<E2bRequest> {
        self.shared.requests.lock().expect("log").clone()
    }

    /// The next process stream sends its start and then nothing at all: no output, no
    /// keepalive (a hung connection).
    pub fn hang_next_process(&self) {
        *self.shared.hang_next_process.lock().expect("flag") = true;
    }

    /// Refuses the next sandbox creation with a 500 whose body is `body`.
    pub fn refuse_next_creation(&self, body: &str) {
        *self.shared.refuse_next_creation.lock().expect("setting") = Some(body.to_owned());
    }

    /// The templates asked for, each with its builds.
    pub fn templates(&self) -> Vec<FakeTemplate> {
        self.shared.templates.lock().expect("templates").templates()
    }

    /// How many file uploads came with an API key (the upload address is E2B's
    /// storage, which is to get none).
    pub fn uploads_with_a_key(&self) -> usize {
        self.shared
            .templates
            .lock()
            .expect("templates")
            .uploads_with_a_key()
    }

    /// From now on, a template build whose `RUN` step holds `text` fails at that step.
    pub fn fail_template_steps_holding(&self, text: &str) {
        self.shared
            .templates
            .lock()
            .expect("templates")
            .fail_step_holding(text);
    }

    /// From now on, answers as an E2B that does not make secured sandboxes: a sandbox
    /// asked for as secured comes without an access token.
    pub fn ignore_secure(&self) {
        *self.shared.ignores_secure.lock().expect("setting") = true;
    }
}

async fn handle(shared: Arc<Shared>, request: Request<Body>) -> Response<Body> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or_default().to_owned();
    let headers = request.headers().clone();
    let body = to_bytes(request.into_body(), 512 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let response = route(&shared, &method, &path, &query, &headers, body.to_vec()).await;
    shared.requests.lock().expect("log").push(E2bRequest {
        method: method.to_string(),
        path: path.clone(),
        status: response.status().as_u16(),
        connect_timeout_ms: headers
            .get("connect-timeout-ms")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    response
}

fn sandbox_json(sandbox: &FakeSandbox) -> Value {
    json!({
        "templateID": sandbox.template,
        "sandboxID": sandbox.id,
        "clientID": "fake-client",
        "startedAt": "2026-11-30T00:00:00Z",
        "endAt": "2026-11-30T01:00:00Z",
        "cpuCount": 2,
        "memoryMB": 512,
        "diskSizeMB": 1024,
        "state": "running",
        "envdVersion": "0.2.0",
        "metadata": sandbox.metadata,
    })
}

async fn route(
    shared: &Arc<Shared>,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: Vec<u8>,
) -> Response<Body> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    if segments.first() == Some(&"envd") {
        return envd(shared, method, &segments[1..], query, headers, body).await;
    }
    if let ("PUT", ["uploads", rest @ ..]) = (method.as_str(), segments.as_slice()) {
        return templates::upload(shared, rest, headers, &body);
    }
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
    if key != Some(shared.api_key.as_str()) {
        return error(StatusCode::UNAUTHORIZED, "Invalid API key");
    }
    let api_base = format!(
        "http://{}",
        headers
            .get("host")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    );
    if let Some(answer) =
        templates::route(shared, &api_base, method.as_str(), &segments, query, &body)
    {
        return answer;
    }
    match (method.as_str(), segments.as_slice()) {
        ("POST", ["sandboxes"]) => {
            if let Some(refusal) = shared.refuse_next_creation.lock().expect("setting").take() {
                return Response::builder()
                    .status(StatusCode::INTERNAL_SERVER_ERROR)
                    .header("content-type", "application/json")
                    .body(Body::from(refusal))
                    .expect("a refusal");
            }
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            let Some(template) = request.get("templateID").and_then(Value::as_str) else {
                return error(StatusCode::BAD_REQUEST, "templateID is required");
            };
            if !shared
                .templates
                .lock()
                .expect("templates")
                .startable(template)
            {
                return error(
                    StatusCode::NOT_FOUND,
                    &format!("template '{template}' with a ready build not found"),
                );
            }
            let number = {
                let mut next = shared.next.lock().expect("counter");
                *next += 1;
                *next
            };
            let id = format!("sbx{number:06}");
            let home = shared.root.join(&id).join("home/user");
            std::fs::create_dir_all(&home).expect("a sandbox home");
            let secure = request.get("secure").and_then(Value::as_bool) == Some(true)
                && !*shared.ignores_secure.lock().expect("setting");
            let sandbox = FakeSandbox {
                id: id.clone(),
                template: template.to_owned(),
                home,
                secure,
                access_token: format!("envd-token-{number}"),
                timeout_seconds: request.get("timeout").and_then(Value::as_u64).unwrap_or(15),
                killed: false,
                process_groups: Vec::new(),
                metadata: request
                    .get("metadata")
                    .cloned()
                    .unwrap_or_else(|| json!({})),
                network: request.get("network").cloned().unwrap_or(Value::Null),
                allow_internet_access: request
                    .get("allow_internet_access")
                    .and_then(Value::as_bool),
            };
            let mut answer = json!({
                "templateID": template,
                "sandboxID": id,
                "clientID": "fake-client",
                "envdVersion": "0.2.0",
                "domain": null,
            });
            if secure {
                answer["envdAccessToken"] = json!(sandbox.access_token);
            }
            shared
                .sandboxes
                .lock()
                .expect("sandboxes")
                .insert(id, sandbox);
            json_answer(StatusCode::CREATED, answer)
        }
        ("GET", ["v2", "sandboxes"]) => {
            let limit: usize = query
                .split('&')
                .find_map(|pair| pair.strip_prefix("limit="))
                .and_then(|value| value.parse().ok())
                .unwrap_or(100);
            let sandboxes = shared.sandboxes.lock().expect("sandboxes");
            let listed: Vec<Value> = sandboxes
                .values()
                .filter(|sandbox| !sandbox.killed)
                .take(limit)
                .map(sandbox_json)
                .collect();
            json_answer(StatusCode::OK, Value::Array(listed))
        }
        ("GET", ["sandboxes", id]) => match shared.sandboxes.lock().expect("sandboxes").get(*id) {
            Some(sandbox) if !sandbox.killed => json_answer(StatusCode::OK, sandbox_json(sandbox)),
            _ => error(StatusCode::NOT_FOUND, "sandbox not found"),
        },
        ("POST", ["sandboxes", id, "timeout"]) => {
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            let mut sandboxes = shared.sandboxes.lock().expect("sandboxes");
            match (
                sandboxes.get_mut(*id),
                request.get("timeout").and_then(Value::as_u64),
            ) {
                (Some(sandbox), Some(seconds)) if !sandbox.killed => {
                    sandbox.timeout_seconds = seconds;
                    empty(StatusCode::NO_CONTENT)
                }
                (Some(_), None) => error(StatusCode::BAD_REQUEST, "timeout is required"),
                _ => error(StatusCode::NOT_FOUND, "sandbox not found"),
            }
        }
        ("DELETE", ["sandboxes", id]) => {
            let mut sandboxes = shared.sandboxes.lock().expect("sandboxes");
            match sandboxes.get_mut(*id) {
                Some(sandbox) if !sandbox.killed => {
                    sandbox.killed = true;
                    for group in sandbox.process_groups.drain(..) {
                        let _ = std::process::Command::new("kill")
                            .args(["-KILL", "--", &format!("-{group}")])
                            .status();
                    }
                    let _ = std::fs::remove_dir_all(
                        sandbox
                            .home
                            .parent()
                            .and_then(|p| p.parent())
                            .expect("a root"),
                    );
                    empty(StatusCode::NO_CONTENT)
                }
                _ => error(StatusCode::NOT_FOUND, "sandbox not found"),
            }
        }
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}

async fn envd(
    shared: &Arc<Shared>,
    method: &Method,
    segments: &[&str],
    query: &str,
    headers: &HeaderMap,
    body: Vec<u8>,
) -> Response<Body> {
    let Some((id, rest)) = segments.split_first() else {
        return error(StatusCode::NOT_FOUND, "no sandbox");
    };
    let sandbox = match shared.sandboxes.lock().expect("sandboxes").get(*id) {
        Some(sandbox) if !sandbox.killed => sandbox.clone(),
        _ => return error(StatusCode::BAD_GATEWAY, "The sandbox was not found"),
    };
    // envd's description: its calls take the access token (`X-Access-Token`) or none;
    // a secured sandbox takes only its own token, and its health check none.
    let token = headers.get("x-access-token").and_then(|v| v.to_str().ok());
    let health = rest == ["health"];
    if sandbox.secure && !health && token != Some(sandbox.access_token.as_str()) {
        return error(StatusCode::UNAUTHORIZED, "invalid access token");
    }
    let resolve = |relative: &str| -> Option<PathBuf> {
        let relative = relative
            .trim_start_matches("/home/user/")
            .trim_start_matches('/');
        let path = std::path::Path::new(relative);
        if path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return None;
        }
        Some(sandbox.home.join(path))
    };
    match (method.as_str(), rest) {
        ("GET", ["health"]) => empty(StatusCode::NO_CONTENT),
        ("POST", ["files"]) => {
            let Some(target) = query_path(query).and_then(|p| resolve(&p)) else {
                return error(StatusCode::BAD_REQUEST, "invalid path");
            };
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("folders");
            std::fs::write(&target, &body).expect("a file");
            json_answer(
                StatusCode::OK,
                json!([{ "path": target.display().to_string(), "name": target.file_name().unwrap().to_string_lossy(), "type": "file" }]),
            )
        }
        ("GET", ["files"]) => {
            let Some(target) = query_path(query).and_then(|p| resolve(&p)) else {
                return error(StatusCode::BAD_REQUEST, "invalid path");
            };
            match std::fs::read(&target) {
                Ok(bytes) => {
                    let mut response = Response::new(Body::from(bytes));
                    response.headers_mut().insert(
                        "content-type",
                        "application/octet-stream".parse().expect("a header"),
                    );
                    response
                }
                Err(_) => error(
                    StatusCode::NOT_FOUND,
                    &format!("path '{}' does not exist", target.display()),
                ),
            }
        }
        ("POST", ["process.Process", "Start"]) => {
            start_process(shared, &sandbox, headers, &body).await
        }
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}

async fn start_process(
    shared: &Arc<Shared>,
    sandbox: &FakeSandbox,
    headers: &HeaderMap,
    body: &[u8],
) -> Response<Body> {
    if body.len() < 5 || body[0] != 0 {
        return error(StatusCode::BAD_REQUEST, "expected one Connect envelope");
    }
    let request: Value = serde_json::from_slice(&body[5..]).unwrap_or_default();
    let process = &request["process"];
    let Some(cmd) = process["cmd"].as_str() else {
        return error(StatusCode::BAD_REQUEST, "process.cmd is required");
    };
    let args: Vec<String> = process["args"]
        .as_array()
        .map(|args| {
            args.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let deadline = headers
        .get("connect-timeout-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis);
    let mut command = tokio::process::Command::new(cmd);
    command
        .args(&args)
        .env_clear()
        .env("HOME", &sandbox.home)
        .env("USER", "user")
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(&sandbox.home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so that ending the process ends what it started too.
    #[cfg(unix)]
    command.process_group(0);
    if let Some(envs) = process["envs"].as_object() {
        for (name, value) in envs {
            command.env(name, value.as_str().unwrap_or_default());
        }
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(spawn_error) => return error(StatusCode::BAD_REQUEST, &spawn_error.to_string()),
    };
    let pid = child.id().unwrap_or_default();
    if let Some(known) = shared
        .sandboxes
        .lock()
        .expect("sandboxes")
        .get_mut(&sandbox.id)
    {
        known.process_groups.push(pid);
    }
    let hang = std::mem::take(&mut *shared.hang_next_process.lock().expect("flag"));
    let keepalive_every = *shared.keepalive_every.lock().expect("interval");
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(64);
    tokio::spawn(async move {
        let send = |payload: Value, flags: u8| {
            let sender = sender.clone();
            async move {
                let _ = sender
                    .send(Ok(envelope(flags, payload.to_string().as_bytes())))
                    .await;
            }
        };
        send(json!({ "event": { "start": { "pid": pid } } }), 0).await;
        if hang {
            let _ = child.wait().await;
            std::future::pending::<()>().await;
        }
        let (chunks, mut received) = tokio::sync::mpsc::unbounded_channel::<(bool, Vec<u8>)>();
        for (is_stdout, pipe) in [
            (
                true,
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
            ),
            (
                false,
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
            ),
        ] {
            let chunks = chunks.clone();
            let Some(mut pipe) = pipe else { continue };
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 8192];
                while let Ok(read) = pipe.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    let _ = chunks.send((is_stdout, buffer[..read].to_vec()));
                }
            });
        }
        drop(chunks);
        let mut keepalive = tokio::time::interval(keepalive_every);
        let deadline_sleep = tokio::time::sleep(deadline.unwrap_or(Duration::from_secs(24 * 3600)));
        tokio::pin!(deadline_sleep);
        let mut pipes_open = true;
        loop {
            tokio::select! {
                chunk = received.recv(), if pipes_open => match chunk {
                    Some((is_stdout, bytes)) => {
                        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                        let event = if is_stdout { json!({ "stdout": data }) } else { json!({ "stderr": data }) };
                        send(json!({ "event": { "data": event } }), 0).await;
                    }
                    None => pipes_open = false,
                },
                status = child.wait(), if !pipes_open => {
                    let code = status.ok().and_then(|s| s.code()).unwrap_or(-1);
                    let mut end = json!({ "exited": true, "status": format!("exit status {code}") });
                    if code != 0 {
                        end["exitCode"] = json!(code);
                    }
                    send(json!({ "event": { "end": end } }), 0).await;
                    send(json!({}), 0x02).await;
                    return;
                }
                _ = keepalive.tick() => send(json!({ "event": { "keepalive": {} } }), 0).await,
                _ = &mut deadline_sleep => {
                    let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
                    send(json!({ "error": { "code": "deadline_exceeded", "message": "the process ran out of time" } }), 0x02).await;
                    return;
                }
            }
        }
    });
    let stream = tokio_stream_from(receiver);
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        "content-type",
        "application/connect+json".parse().expect("a header"),
    );
    response
}

fn tokio_stream_from(
    mut receiver: tokio::sync::mpsc::Receiver<Result<Vec<u8>, std::io::Error>>,
) -> impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures::stream::poll_fn(move |context| receiver.poll_recv(context))
}
