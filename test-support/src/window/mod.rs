//! Driving the real app window: a private X display (Xvfb), tauri-driver in front of
//! WebKitWebDriver, and a WebDriver session on the `handoff-desktop` binary.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};

use crate::cargo_binary;
use crate::virtual_display::VirtualDisplay;

/// The fake GitHub, a keyring and a mirror, for journeys that sign in.
pub mod accessibility;
pub mod github_world;

/// A notification service on a private D-Bus session that records and clicks.
pub mod notification_service;

/// The window's frame through the X server: resized and measured.
mod window_frame;

/// A process that is stopped (SIGTERM, then waited for) when dropped.
struct Stoppable(Child);

impl Drop for Stoppable {
    fn drop(&mut self) {
        // tauri-driver must get SIGTERM, not SIGKILL, or WebKitWebDriver stays behind.
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The app under test, with its own display, driver and data folder.
pub struct AppSession {
    pub client: Client,
    /// The X display the window is on.
    pub display: String,
    _driver: Stoppable,
    _display: Option<VirtualDisplay>,
    /// The app's config folder (where the window's size and place are kept), unless the
    /// test gave its own.
    _config_home: Option<tempfile::TempDir>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

fn find_program(name: &str) -> PathBuf {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .collect()
        })
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".cargo/bin").join(name));
    }
    candidates
        .into_iter()
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed: run scripts/install-test-deps.sh"))
}

async fn wait_for_port(port: u16) {
    crate::eventually::eventually_within(
        Duration::from_secs(20),
        &format!("tauri-driver listens on port {port}"),
        || async move {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .ok()
                .map(|_| ())
        },
    )
    .await
}

impl AppSession {
    /// Opens the real app window on the data in `data_dir`.
    pub async fn start(data_dir: &Path) -> AppSession {
        AppSession::start_with_env(data_dir, &[]).await
    }

    /// Opens the real app window with extra environment variables (e.g. the session bus
    /// of a test keyring).
    pub async fn start_with_env(data_dir: &Path, env: &[(&str, &str)]) -> AppSession {
        AppSession::start_program(&cargo_binary("handoff-desktop"), data_dir, env).await
    }

    /// Opens the window of `program` (the built app, or an installed one such as an
    /// AppImage) on `data_dir`, with extra environment variables.
    pub async fn start_program(
        program: &Path,
        data_dir: &Path,
        env: &[(&str, &str)],
    ) -> AppSession {
        let (display_process, display) = match std::env::var("HANDOFF_TEST_DISPLAY") {
            Ok(display) if !display.is_empty() => (None, display),
            _ => {
                let display = VirtualDisplay::start();
                let name = display.name().to_owned();
                (Some(display), name)
            }
        };
        let config_home = if env.iter().any(|(name, _)| *name == "XDG_CONFIG_HOME") {
            None
        } else {
            Some(tempfile::tempdir().expect("a config folder"))
        };
        // tauri-driver now and then drops the very first request of a session on a
        // loaded machine; a fresh driver is tried before giving up.
        let mut attempt = 1;
        let (client, driver) = loop {
            let port = free_port();
            let native_port = free_port();
            let mut driver = Command::new(find_program("tauri-driver"));
            if let Some(folder) = &config_home {
                driver.env("XDG_CONFIG_HOME", folder.path());
            }
            let driver = driver
                .args([
                    "--port",
                    &port.to_string(),
                    "--native-port",
                    &native_port.to_string(),
                ])
                .arg("--native-driver")
                .arg(find_program("WebKitWebDriver"))
                .env("DISPLAY", &display)
                .env("HANDOFF_DATA_DIR", data_dir)
                .env_remove("WAYLAND_DISPLAY")
                .envs(env.iter().copied())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("tauri-driver starts");
            let driver = Stoppable(driver);
            wait_for_port(port).await;

            let mut capabilities = serde_json::Map::new();
            capabilities.insert(
                "tauri:options".to_owned(),
                serde_json::json!({ "application": program }),
            );
            match ClientBuilder::native()
                .capabilities(capabilities)
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => break (client, driver),
                Err(error) if attempt < 3 => {
                    eprintln!("no WebDriver session on attempt {attempt} ({error}); trying a fresh driver");
                    drop(driver);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    attempt += 1;
                }
                Err(error) => panic!("a WebDriver session on the app: {error}"),
            }
        };
        AppSession {
            client,
            display,
            _driver: driver,
            _display: display_process,
            _config_home: config_home,
        }
    }

    /// Waits until the page has loaded the dashboard (or shown an error).
    pub async fn wait_until_loaded(&self) -> String {
        crate::eventually::eventually_within(
            Duration::from_secs(20),
            "the dashboard loads",
            || async {
                let loaded = self
                    .client
                    .execute("return document.body.dataset.loaded || '';", vec![])
                    .await
                    .expect("script runs");
                loaded
                    .as_str()
                    .filter(|state| !state.is_empty())
                    .map(str::to_owned)
            },
        )
        .await
    }

    /// Evaluates `script` (a function body returning JSON) until `accept` likes its
    /// value, for up to ten seconds.
    pub async fn eventually(
        &self,
        script: &str,
        accept: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        self.eventually_within(Duration::from_secs(10), script, accept)
            .await
    }

    /// [`AppSession::eventually`] with a limit of its own, for what takes long (a run).
    pub async fn eventually_within(
        &self,
        limit: Duration,
        script: &str,
        accept: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + limit;
        loop {
            // WebKitWebDriver now and then answers "Could not parse script result" while
            // the page redraws; such an answer is "not yet", an error only at the end.
            match self.client.execute(script, vec![]).await {
                Ok(value) if accept(&value) || Instant::now() >= deadline => return value,
                Ok(_) => {}
                Err(error) if Instant::now() >= deadline => panic!("script runs: {error}"),
                Err(error) => eprintln!("script failed, trying again: {error}"),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the text `script` returns contains `needle`, and returns that text.
    pub async fn text_eventually_containing(&self, script: &str, needle: &str) -> String {
        let value = self
            .eventually(script, |value| {
                value.as_str().is_some_and(|text| text.contains(needle))
            })
            .await;
        let text = value.as_str().unwrap_or_default().to_owned();
        if !text.contains(needle) {
            // What the window said meanwhile (an error comes as a message in the corner)
            // and a picture of it, to tell a slow answer from a refused one.
            let messages = self
                .client
                .execute(
                    "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join(' | ');",
                    vec![],
                )
                .await
                .unwrap_or_default();
            let picture = self.screenshot("never-contained").await;
            panic!(
                "never contained {needle:?}: {value}; the window's messages: {messages}; the window is in {}",
                picture.display()
            );
        }
        text
    }

    /// Saves a screenshot of the window under target/ and returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        // Let WebKit paint what the DOM already holds before the picture is taken.
        self.client
            .execute_async(
                "const done = arguments[0]; \
                 requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 250)));",
                vec![],
            )
            .await
            .expect("a frame is painted");
        let png = self.client.screenshot().await.expect("screenshot");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("screenshot written");
        path
    }

    /// Clicks the first element matching `css`, waiting up to ten seconds for it (and
    /// finding it again if the page re-rendered it meanwhile).
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let clicked = match self.client.find(fantoccini::Locator::Css(css)).await {
                Ok(element) => element.click().await.map(|_| ()),
                Err(error) => Err(error),
            };
            match clicked {
                Ok(()) => return,
                Err(error) => {
                    if Instant::now() >= deadline {
                        let picture = self.screenshot("could-not-click").await;
                        panic!(
                            "could not click {css}: {error:?}; the window is in {}",
                            picture.display()
                        );
                    }
                    // A retry clicks again: said on the test's output, so a click that
                    // both took effect and answered with an error can be told apart.
                    eprintln!("click on {css} answered {error:?}; trying again");
                    // Something lies over it (a sticky bar at a scrolling panel's edge), or
                    // WebKit finds it out of reach where the panel scrolls: bring it to the
                    // middle, as a person would scroll to it.
                    if matches!(
                        &error,
                        fantoccini::error::CmdError::Standard(standard)
                            if matches!(
                                standard.error,
                                fantoccini::error::ErrorStatus::ElementClickIntercepted
                                    | fantoccini::error::ErrorStatus::ElementNotInteractable
                            )
                    ) {
                        let scrolled = self
                            .client
                            .execute(
                                "document.querySelector(arguments[0])?.scrollIntoView({ block: 'center' });",
                                vec![serde_json::Value::String(css.to_owned())],
                            )
                            .await;
                        if let Err(error) = scrolled {
                            eprintln!("could not scroll {css} into view: {error}");
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// Waits (up to 20 s) for a native dialog titled `title` on the window's display,
    /// takes a picture of the whole display into `target/screenshots/{picture}.png`, and
    /// answers it by pressing `key` (`Return` for the dialog's default, `Escape` to
    /// decline), as a person at the keyboard would. The page cannot reach such a dialog;
    /// the test reaches it through the X server.
    pub async fn answer_native_dialog(&self, title: &str, picture: &str, key: &str) {
        // xdotool waits for the window itself; the limit bounds a dialog that never comes.
        let search = tokio::process::Command::new("xdotool")
            .args(["search", "--sync", "--name", title])
            .env("DISPLAY", &self.display)
            .kill_on_drop(true)
            .output();
        let window = match tokio::time::timeout(Duration::from_secs(20), search).await {
            Ok(found) => {
                let found = found.expect("xdotool runs");
                let ids = String::from_utf8_lossy(&found.stdout).into_owned();
                ids.lines().next().unwrap_or_default().trim().to_owned()
            }
            Err(_) => {
                let shot = self.screenshot("no-native-dialog").await;
                panic!(
                    "no native dialog titled {title:?} appeared; the window is in {}",
                    shot.display()
                );
            }
        };
        // Drawn once two pictures of it in a row are alike.
        let last_picture = std::sync::Mutex::new(Vec::new());
        let (last_picture, display, dialog) = (&last_picture, &self.display, &window);
        crate::eventually::eventually("the native dialog is drawn", move || async move {
            let taken = tokio::process::Command::new("import")
                .args(["-window", dialog, "ppm:-"])
                .env("DISPLAY", display)
                .output()
                .await
                .expect("import runs");
            let mut last = last_picture.lock().expect("the last picture");
            let alike = taken.status.success() && !taken.stdout.is_empty() && *last == taken.stdout;
            *last = taken.stdout;
            alike.then_some(())
        })
        .await;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        let shot = dir.join(format!("{picture}.png"));
        let taken = tokio::process::Command::new("import")
            .args(["-window", "root"])
            .arg(&shot)
            .env("DISPLAY", &self.display)
            .status()
            .await
            .expect("import runs");
        assert!(taken.success(), "the display's picture was taken");
        // No window manager runs on the test display: the dialog gets the keyboard's
        // focus directly.
        let pressed = tokio::process::Command::new("xdotool")
            .args([
                "windowfocus",
                "--sync",
                &window,
                "key",
                "--clearmodifiers",
                key,
            ])
            .env("DISPLAY", &self.display)
            .status()
            .await
            .expect("xdotool runs");
        assert!(pressed.success(), "the key reached the dialog");
    }

    /// Clicks `css` until `opened` (a script returning true once the click had its
    /// effect) holds: up to three clicks, each given three seconds. Under load the
    /// WebDriver sometimes delivers a click that the page never sees; a person would
    /// click again, and so does this (saying so on the test's output).
    pub async fn click_until(&self, css: &str, opened: &str) {
        for attempt in 1..=3 {
            self.click(css).await;
            let effect = self
                .eventually_within(Duration::from_secs(3), opened, |value| {
                    value == &serde_json::Value::Bool(true)
                })
                .await;
            if effect == serde_json::Value::Bool(true) {
                return;
            }
            eprintln!("click {attempt} on {css} had no effect yet; clicking again");
        }
        let picture = self.screenshot("click-had-no-effect").await;
        panic!(
            "three clicks on {css} never made `{opened}` true; the window is in {}",
            picture.display()
        );
    }

    /// Types `text` into the first element matching `css` (after clearing it), finding
    /// it again if the page drew it anew before the typing began (as `click` does).
    pub async fn type_into(&self, css: &str, text: &str) {
        // Line breaks are typed as the Enter key, the way a person types them.
        let enter: char = fantoccini::key::Key::Enter.into();
        let keys = text.replace('\n', &enter.to_string());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let field = self.wait_for(css).await;
            // WebKitWebDriver's "clear" refuses some fields in dialogs; empty it as a
            // person would (select all, delete), then type.
            let emptied = self
                .client
                .execute(
                    "arguments[0].focus(); arguments[0].select(); arguments[0].value = ''; \
                     arguments[0].dispatchEvent(new Event('input', { bubbles: true }));",
                    vec![serde_json::to_value(&field).expect("element reference")],
                )
                .await;
            let typed = match emptied {
                Ok(_) => field.send_keys(&keys).await,
                Err(error) => Err(error),
            };
            match typed {
                Ok(()) => return,
                Err(error) if Instant::now() >= deadline => {
                    panic!("type into {css}: {error}")
                }
                Err(error) => {
                    eprintln!("typing into {css} failed ({error}); finding it again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// Waits until what the page shows has had its chance to load and run: every image
    /// has loaded or failed (its handlers have fired), then two frames were drawn.
    pub async fn settled(&self) {
        self.client
            .execute_async(
                "const done = arguments[arguments.length - 1]; \
                 const pending = [...document.images].filter((image) => !image.complete) \
                   .map((image) => new Promise((resolve) => { \
                     image.addEventListener('load', resolve, { once: true }); \
                     image.addEventListener('error', resolve, { once: true }); })); \
                 Promise.all(pending).then(() => \
                   requestAnimationFrame(() => requestAnimationFrame(() => done(true))));",
                vec![],
            )
            .await
            .expect("the page settles");
    }

    /// The first element matching `css`, once it is there.
    pub async fn wait_for(&self, css: &str) -> fantoccini::elements::Element {
        crate::eventually::eventually_within(
            Duration::from_secs(10),
            &format!("{css} appears"),
            || async { self.client.find(fantoccini::Locator::Css(css)).await.ok() },
        )
        .await
    }

    /// Puts the messages in the corner away and scrolls the first element matching
    /// `css` to the top, for a picture of it.
    pub async fn show_for_picture(&self, css: &str) {
        self.client
            .execute(
                "document.querySelectorAll('.toast .toast-close').forEach(b => b.click()); \
                 document.querySelector(arguments[0]).scrollIntoView({ block: 'start' });",
                vec![serde_json::Value::String(css.to_owned())],
            )
            .await
            .expect("script runs");
    }

    /// The text of every element matching `css`, in order.
    pub async fn texts(&self, css: &str) -> Vec<String> {
        let value = self
            .client
            .execute(
                "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent);",
                vec![serde_json::Value::String(css.to_owned())],
            )
            .await
            .expect("script runs");
        serde_json::from_value(value).expect("a list of texts")
    }

    pub async fn close(self) {
        // The processes go with `self` either way; a session that hangs must not hang
        // the test.
        match tokio::time::timeout(Duration::from_secs(30), self.client.close()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("the WebDriver session did not close cleanly: {error}"),
            Err(_) => eprintln!("the WebDriver session did not close within 30 s"),
        }
    }
}
