//! Git over HTTP for the fake's repositories: real `git http-backend` (CGI) behind the
//! same token scheme as the API (HTTP Basic with the token as password, as github.com
//! takes it), so Handoff's real `git fetch` and `git push` run unchanged.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use tokio::io::AsyncWriteExt as _;

use super::Shared;

/// Paths like `/owner/name.git/info/refs` and `/owner/name.git/git-upload-pack`.
pub fn is_git_path(path: &str) -> bool {
    path.contains(".git/")
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Body::from(text.to_owned()));
    *response.status_mut() = status;
    response
}

pub async fn serve(
    shared: &Shared,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let login = {
        let state = shared.state.lock().expect("state");
        super::bare_repository::token_of(headers)
            .and_then(|token| state.user_by_token(&token).map(|user| user.login.clone()))
    };
    let Some(login) = login else {
        let mut response = plain(StatusCode::UNAUTHORIZED, "Authentication required\n");
        response.headers_mut().insert(
            "www-authenticate",
            HeaderValue::from_static("Basic realm=\"GitHub\""),
        );
        return response;
    };
    // The repository must exist (letter case as stored on disk).
    let Some((repo_part, _)) = path.trim_start_matches('/').split_once(".git/") else {
        return plain(StatusCode::NOT_FOUND, "Repository not found.\n");
    };
    let exists = {
        let state = shared.state.lock().expect("state");
        repo_part
            .split_once('/')
            .and_then(|(owner, name)| state.repo(owner, name).map(|repo| repo.bare_path.exists()))
            .unwrap_or(false)
    };
    if !exists {
        return plain(StatusCode::NOT_FOUND, "Repository not found.\n");
    }
    let (owner, name) = repo_part.split_once('/').unwrap_or_default();
    // A fork GitHub is still copying has no git data yet.
    if super::forks::still_copying(
        &mut shared.state.lock().expect("state"),
        &super::state::repo_key(owner, name),
    ) {
        return plain(StatusCode::NOT_FOUND, "Repository not found.\n");
    }
    super::bare_repository::refresh_pull_heads(
        &mut shared.state.lock().expect("state"),
        owner,
        name,
    );

    let mut command = tokio::process::Command::new("git");
    command
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", &shared.git_root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("PATH_INFO", path)
        .env("REQUEST_METHOD", method.as_str())
        .env("QUERY_STRING", query)
        .env("REMOTE_USER", &login)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", body.len().to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (header, variable) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "GIT_PROTOCOL"),
    ] {
        if let Some(value) = headers.get(header).and_then(|v| v.to_str().ok()) {
            command.env(variable, value);
        }
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("git http-backend: {error}\n"),
            )
        }
    };
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&body).await;
        let _ = stdin.shutdown().await;
    });
    let output = match child.wait_with_output().await {
        Ok(output) => output,
        Err(error) => {
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("git http-backend: {error}\n"),
            )
        }
    };
    let _ = writer.await;
    if path.ends_with("git-receive-pack") {
        super::bare_repository::refresh_pull_heads(
            &mut shared.state.lock().expect("state"),
            owner,
            name,
        );
    }

    // CGI answer: header lines, a blank line, the body.
    let stdout = output.stdout;
    let split = stdout
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .map(|index| (index, 4))
        .or_else(|| {
            stdout
                .windows(2)
                .position(|window| window == b"\n\n")
                .map(|index| (index, 2))
        });
    let Some((header_end, separator)) = split else {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!(
                "git http-backend said: {}\n",
                String::from_utf8_lossy(&output.stderr)
            ),
        );
    };
    let header_text = String::from_utf8_lossy(&stdout[..header_end]).into_owned();
    let mut response = Response::new(Body::from(stdout[header_end + separator..].to_vec()));
    for line in header_text.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value
                .split_whitespace()
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or(500);
            *response.status_mut() =
                StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        } else if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}
