//! The app window's frame as the X server sees it: found, resized and measured through
//! the display, the way a person dragging its edge changes it. The WebDriver's own
//! resize waits for an answer from a window manager that the test display does not run,
//! and on a loaded machine that answer never comes.

use std::time::Duration;

use super::AppSession;

impl AppSession {
    /// The X window of the app on this session's display: the one mapped window titled
    /// "Handoff". Waits up to 20 s for it.
    async fn app_window_on_the_display(&self) -> String {
        let what = format!(
            "a window titled Handoff is shown on display {}",
            self.display
        );
        crate::eventually::eventually_within(Duration::from_secs(20), &what, || async {
            let found = self
                .xdotool(&["search", "--onlyvisible", "--name", "^Handoff$"])
                .await;
            found
                .lines()
                .map(str::trim)
                .find(|id| !id.is_empty())
                .map(str::to_owned)
        })
        .await
    }

    /// Resizes the app window to `width` × `height` through the X server.
    pub async fn resize_on_the_display(&self, width: u32, height: u32) {
        let window = self.app_window_on_the_display().await;
        self.xdotool(&[
            "windowsize",
            &window,
            &width.to_string(),
            &height.to_string(),
        ])
        .await;
    }

    /// The app window's size as the X server has it.
    pub async fn size_on_the_display(&self) -> (u32, u32) {
        let window = self.app_window_on_the_display().await;
        let geometry = self
            .xdotool(&["getwindowgeometry", "--shell", &window])
            .await;
        let field = |name: &str| -> u32 {
            geometry
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or_else(|| panic!("xdotool gave no {name}: {geometry}"))
        };
        (field("WIDTH"), field("HEIGHT"))
    }

    async fn xdotool(&self, arguments: &[&str]) -> String {
        let output = tokio::process::Command::new("xdotool")
            .args(arguments)
            .env("DISPLAY", &self.display)
            .output()
            .await
            .expect("xdotool runs");
        // `search` ends with 1 when nothing matches yet; the caller waits for a match.
        if !output.status.success() && arguments.first() != Some(&"search") {
            panic!(
                "xdotool {arguments:?} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}
