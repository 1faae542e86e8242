//! The commands the page may call are named once (`src/command_names.rs`): the window's
//! capability grants exactly those, and the page's `backend.js` calls exactly those, so a
//! command added, renamed or dropped in one place and not the others fails here.

use super::page_backend::{desktop_folder, registered_commands};

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_capability_grants_exactly_the_registered_commands() {
    let commands: Vec<String> = registered_commands();
    let capability: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(desktop_folder().join("capabilities/main-window.json")).unwrap(),
    )
    .unwrap();
    let granted: Vec<String> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|permission| permission.as_str().unwrap().to_owned())
        .filter(|permission| !permission.starts_with("core:"))
        .map(|permission| {
            permission
                .strip_prefix("allow-")
                .unwrap_or_else(|| panic!("{permission} is not an allow- permission"))
                .replace('-', "_")
        })
        .collect();
    assert_eq!(sorted(granted), sorted(commands));
    // Nothing else: the page gets no opener, shell, dialog or notification permission.
    let others: Vec<&str> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|permission| permission.as_str())
        .filter(|permission| permission.starts_with("core:"))
        .collect();
    assert_eq!(
        others,
        ["core:event:allow-listen", "core:event:allow-unlisten"]
    );
}

#[test]
fn the_page_calls_exactly_the_registered_commands() {
    let commands: Vec<String> = registered_commands();
    let backend = std::fs::read_to_string(desktop_folder().join("../ui/js/backend.js")).unwrap();
    let called: Vec<String> = backend
        .split("call(\"")
        .skip(1)
        .chain(backend.split("invoke(\"").skip(1))
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect();
    assert_eq!(sorted(called), sorted(commands));
    // And nowhere else: every other module goes through backend.js.
    for entry in std::fs::read_dir(desktop_folder().join("../ui/js")).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|name| name == "backend.js") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("__TAURI__") && !text.contains("invoke("),
            "{} talks to the Rust side itself",
            path.display()
        );
    }
}
