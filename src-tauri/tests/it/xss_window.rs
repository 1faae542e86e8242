//! Hostile text in the real window: every payload of the XSS corpus goes into a feedback
//! item's title and body, a visitor's and the owner's follow-ups and the PR's managed
//! comments; the window shows them all, and afterwards no payload has run script (a
//! frame included), the page has not gone anywhere, no element carries an event
//! handler, nothing links or points to `javascript:` or `data:`, nothing active (script,
//! frame, object, style, form, SVG) was let into rendered text, and the listener that
//! stands in for a remote server was never contacted.

use handoff_test_support as support;

use std::io::Read as _;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use handoff::domain::{CommentKind, VersionOrigin};
use handoff::store::NewCommentVersion;
use serde_json::Value;
use support::seed;
use support::window::github_world::open_card;
use support::window::AppSession;
use support::xss_corpus::{payloads, Payload};

/// A listener on this machine standing in for a remote server: it records the first
/// line of every connection it gets.
struct RemoteStandIn {
    address: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl RemoteStandIn {
    fn start() -> RemoteStandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let address = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for connection in listener.incoming() {
                let Ok(mut connection) = connection else {
                    continue;
                };
                connection
                    .set_read_timeout(Some(Duration::from_secs(1)))
                    .unwrap();
                let mut head = [0u8; 512];
                let read = connection.read(&mut head).unwrap_or(0);
                let line = String::from_utf8_lossy(&head[..read])
                    .lines()
                    .next()
                    .unwrap_or("(nothing sent)")
                    .to_owned();
                seen.lock().unwrap().push(line);
            }
        });
        RemoteStandIn { address, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// Run in the page: what a payload may have left behind. Script that ran called
/// `XSS(n)`; the rest is read from the document.
const INSPECT_PAGE: &str = r#"
const bad = [];
const urlAttributes = ['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'srcdoc', 'background', 'poster'];
for (const element of document.querySelectorAll('*')) {
  for (const attribute of element.attributes) {
    const name = attribute.name.toLowerCase();
    const value = attribute.value.replace(/[\u0000-\u0020]/g, '').toLowerCase();
    if (name.startsWith('on')) bad.push(`${element.tagName} has ${name}`);
    if (urlAttributes.includes(name) && /^(javascript|vbscript|data):/.test(value)) {
      bad.push(`${element.tagName} ${name}=${attribute.value}`);
    }
  }
}
const active = 'script, iframe, frame, frameset, object, embed, style, link, meta, base, form, svg, math, template, noscript, img, video, audio, source, marquee, button, textarea, select';
for (const area of document.querySelectorAll('.markdown')) {
  for (const element of area.querySelectorAll(active)) bad.push(`rendered text holds <${element.tagName.toLowerCase()}>`);
  for (const element of area.querySelectorAll('[style]')) bad.push(`rendered text holds a style on <${element.tagName.toLowerCase()}>`);
  for (const link of area.querySelectorAll('a[href]')) {
    const href = link.getAttribute('href');
    if (!/^(https?:|mailto:)/i.test(href)) bad.push(`a link to ${href}`);
  }
  for (const input of area.querySelectorAll('input')) {
    if (input.type !== 'checkbox' || !input.disabled) bad.push(`an input of type ${input.type}`);
  }
}
return {
  ran: window.__xssRan || [],
  bad,
  location: location.href,
  baseUri: document.baseURI,
  frames: window.frames.length,
  rendered: document.querySelectorAll('#detail .markdown').length,
};
"#;

const RECORD_SCRIPT_CALLS: &str =
    "window.__xssRan = []; window.XSS = (n) => window.__xssRan.push(n ?? 'unnumbered'); \
     return location.href;";

/// Checks the page and returns how many rendered texts the detail panel shows.
async fn inspect(
    app: &AppSession,
    start_location: &Value,
    payload_shown: &str,
    remote: &RemoteStandIn,
) -> u64 {
    let page = app.client.execute(INSPECT_PAGE, vec![]).await.unwrap();
    assert_eq!(
        page["ran"],
        Value::Array(vec![]),
        "script ran with {payload_shown} in view: {page}"
    );
    assert_eq!(
        page["bad"],
        Value::Array(vec![]),
        "with {payload_shown} in view"
    );
    assert_eq!(
        &page["location"], start_location,
        "the page went elsewhere with {payload_shown}"
    );
    assert_eq!(
        &page["baseUri"], start_location,
        "the base address changed with {payload_shown}"
    );
    assert_eq!(page["frames"], 0, "a frame appeared with {payload_shown}");
    assert_eq!(
        remote.requests(),
        Vec::<String>::new(),
        "something was loaded from the stand-in remote with {payload_shown}"
    );
    page["rendered"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn no_payload_of_the_xss_corpus_runs_loads_or_links_anything_in_the_window() {
    let remote = RemoteStandIn::start();
    let corpus: Vec<Payload> = payloads(&remote.address);
    assert!(corpus.len() >= 50);

    let data_dir = tempfile::tempdir().unwrap();
    let store = handoff::Store::open_in(data_dir.path()).await.unwrap();
    let repo = seed::add_repo(&store, seed::DEMO_REPO).await;

    // One item per payload: the payload is its title and its body.
    let mut items = Vec::new();
    for payload in &corpus {
        items.push(seed::add_feedback(&store, seed::DEMO_REPO, &payload.text, &payload.text).await);
    }

    // One item with a PR whose thread and managed comments carry the whole corpus.
    let threaded = seed::add_feedback(
        &store,
        seed::DEMO_REPO,
        "Every payload in the thread",
        "See below.",
    )
    .await;
    seed::run_to_end(&store, &threaded, seed::success(0.1)).await;
    store
        .feedback()
        .record_pull_request(
            threaded.id,
            7,
            "https://github.com/octocat/hello-world/pull/7",
        )
        .await
        .unwrap();
    for payload in &corpus {
        store
            .feedback()
            .add_visitor_follow_up(
                threaded.id,
                &payload.text,
                "mallory",
                10_000 + payload.number as u64,
            )
            .await
            .unwrap();
        store
            .feedback()
            .add_owner_follow_up(threaded.id, &payload.text)
            .await
            .unwrap();
    }
    let kinds = CommentKind::ALL;
    for (index, kind) in kinds.iter().enumerate() {
        let content = corpus
            .iter()
            .filter(|payload| payload.number % kinds.len() == index)
            .map(|payload| payload.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let comment = store
            .comments()
            .ensure_managed_comment(repo.id, 7, *kind)
            .await
            .unwrap();
        store
            .comments()
            .add_comment_version(
                comment.id,
                &NewCommentVersion {
                    body: content.clone(),
                    content,
                    full_content: None,
                    origin: VersionOrigin::Agent,
                    author_login: None,
                    run_id: None,
                    based_on: None,
                    edited_by_other: false,
                },
            )
            .await
            .unwrap();
    }

    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    let start_location = app
        .client
        .execute(RECORD_SCRIPT_CALLS, vec![])
        .await
        .unwrap();

    // The board shows every title as text.
    let titles = app.texts(".card .card-title").await;
    for payload in &corpus {
        assert!(
            titles.iter().any(
                |title| title == payload.text.lines().next().unwrap_or("").trim()
                    || title.contains(payload.text.lines().next().unwrap_or("").trim())
            ),
            "payload {} is not on the board as text: {titles:?}",
            payload.number
        );
    }
    inspect(&app, &start_location, "the board", &remote).await;

    for (payload, item) in corpus.iter().zip(&items) {
        open_card(&app, item.id.0).await;
        let shown = format!(
            "payload {} ({}) as a feedback body",
            payload.number, payload.category
        );
        // Let what the body would load or run have its chance.
        app.settled().await;
        assert!(
            inspect(&app, &start_location, &shown, &remote).await >= 1,
            "{shown}: nothing rendered"
        );
    }

    open_card(&app, threaded.id.0).await;
    let rendered = app
        .eventually(
            "return document.querySelectorAll('#detail .thread-entry .markdown').length;",
            |value| value.as_u64() == Some(2 * corpus.len() as u64),
        )
        .await;
    assert_eq!(
        rendered,
        2 * corpus.len() as u64,
        "every follow-up is shown"
    );
    let comments = app
        .eventually(
            "return document.querySelectorAll('#detail .managed-comment .markdown').length;",
            |value| value.as_u64() == Some(kinds.len() as u64),
        )
        .await;
    assert_eq!(
        comments,
        kinds.len() as u64,
        "every managed comment is shown"
    );
    app.settled().await;
    inspect(
        &app,
        &start_location,
        "the thread and the managed comments",
        &remote,
    )
    .await;
    app.screenshot("xss-thread").await;
    app.close().await;

    // The markdown the window shows is made in Rust; the same corpus through that
    // renderer keeps none of the active parts either (checked here without a page).
    for payload in &corpus {
        let html = handoff::markdown::render_markdown(&payload.text).to_lowercase();
        for forbidden in [
            "<script",
            "<iframe",
            "<frame",
            "<object",
            "<embed",
            "<svg",
            "<math",
            "<style",
            "<link",
            "<meta",
            "<base",
            "<form",
            "<img",
            "style=",
            "href=\"javascript:",
            "href=\"vbscript:",
            "href=\"data:",
            "src=",
        ] {
            assert!(
                !html.contains(forbidden),
                "payload {} keeps {forbidden:?}: {html}",
                payload.number
            );
        }
    }
}
