//! axe-core in the real window: the accessibility rules of Deque's checker run against
//! whatever the window shows, through WebDriver. axe comes from PyPI's
//! axe-selenium-python wheel (`scripts/install-test-deps.sh` takes it out into
//! `~/.cache/handoff/axe-core/`, or `HANDOFF_AXE_CORE` names the file).

use std::path::PathBuf;

use serde_json::Value;

use super::AppSession;

/// One rule broken on one view.
#[derive(Debug, Clone)]
pub struct Violation {
    pub view: String,
    pub rule: String,
    /// `minor`, `moderate`, `serious` or `critical`.
    pub impact: String,
    pub help: String,
    /// The elements that break it (CSS selectors).
    pub elements: Vec<String>,
}

impl Violation {
    pub fn is_serious(&self) -> bool {
        matches!(self.impact.as_str(), "serious" | "critical")
    }
}

/// What axe found on each view checked, for the report.
#[derive(Debug, Default)]
pub struct AccessibilityReport {
    pub views: Vec<(String, usize)>,
    pub violations: Vec<Violation>,
    pub axe_version: String,
}

fn axe_source() -> String {
    let path = std::env::var_os("HANDOFF_AXE_CORE")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs_home().join(".cache/handoff/axe-core/axe.min.js"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "axe-core is not at {} ({error}): scripts/install-test-deps.sh fetches it",
            path.display()
        )
    })
}

fn dirs_home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
}

impl AccessibilityReport {
    /// Runs axe on what the window shows now, as view `view`.
    pub async fn check(&mut self, app: &AppSession, view: &str) {
        let script = format!(
            "const done = arguments[arguments.length - 1];\n\
             if (!window.axe) {{ {source}\n }}\n\
             const contrast = (node) => {{\n\
               const data = node.any && node.any[0] && node.any[0].data;\n\
               return data && data.contrastRatio ? ` (${{data.fgColor}} on ${{data.bgColor}}: ${{data.contrastRatio}}, needs ${{data.expectedContrastRatio}})` : '';\n\
             }};\n\
             window.axe.run(document, {{ resultTypes: ['violations'] }}).then(\n\
               (result) => done(JSON.stringify({{\n\
                 version: window.axe.version,\n\
                 passes: result.passes.length,\n\
                 violations: result.violations.map((v) => ({{\n\
                   id: v.id, impact: v.impact, help: v.help,\n\
                   nodes: v.nodes.map((n) => n.target.join(' ') + contrast(n)),\n\
                 }})),\n\
               }})),\n\
               (error) => done(JSON.stringify({{ error: String(error) }})),\n\
             );",
            source = axe_source()
        );
        let answer = app
            .client
            .execute_async(&script, vec![])
            .await
            .expect("axe runs in the window");
        let answer: Value = serde_json::from_str(answer.as_str().expect("axe answers in text"))
            .expect("axe's answer is JSON");
        if let Some(error) = answer.get("error") {
            panic!("axe failed on {view}: {error}");
        }
        self.axe_version = answer["version"].as_str().unwrap_or_default().to_owned();
        let found: Vec<Violation> = answer["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|violation| Violation {
                view: view.to_owned(),
                rule: violation["id"].as_str().unwrap_or_default().to_owned(),
                impact: violation["impact"].as_str().unwrap_or("minor").to_owned(),
                help: violation["help"].as_str().unwrap_or_default().to_owned(),
                elements: violation["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|node| node.as_str().unwrap_or_default().to_owned())
                    .collect(),
            })
            .collect();
        self.views.push((view.to_owned(), found.len()));
        self.violations.extend(found);
    }

    /// The serious and critical violations.
    pub fn serious(&self) -> Vec<&Violation> {
        self.violations.iter().filter(|v| v.is_serious()).collect()
    }

    /// The report as markdown.
    pub fn markdown(&self) -> String {
        let mut text = format!(
            "axe-core {} in the real window (WebKitGTK under Xvfb, through WebDriver).\n\n\
             | View | Violations | Serious or critical |\n|---|---|---|\n",
            self.axe_version
        );
        for (view, count) in &self.views {
            let serious = self
                .violations
                .iter()
                .filter(|v| &v.view == view && v.is_serious())
                .count();
            text.push_str(&format!("| {view} | {count} | {serious} |\n"));
        }
        if self.violations.is_empty() {
            text.push_str("\nNo rule is broken on any view.\n");
        } else {
            text.push_str(
                "\n| View | Rule | Impact | What it asks | Elements |\n|---|---|---|---|---|\n",
            );
            for violation in &self.violations {
                text.push_str(&format!(
                    "| {} | `{}` | {} | {} | {} |\n",
                    violation.view,
                    violation.rule,
                    violation.impact,
                    violation.help,
                    violation
                        .elements
                        .iter()
                        .map(|element| format!("`{element}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        text
    }
}
