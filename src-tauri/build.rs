//! Tauri's build step: reads tauri.conf.json and capabilities/, embeds ../ui, and
//! declares the app's own commands (named once, in src/command_names.rs) so that a
//! capability must grant each one.

include!("src/command_names.rs");

macro_rules! command_name_list {
    ($($name:ident),* $(,)?) => {
        &[$(stringify!($name)),*]
    };
}

/// Every command the shell registers; capabilities/main-window.json grants them.
const APP_COMMANDS: &[&str] = with_app_commands!(command_name_list);

fn main() {
    // Tauri's build step names the files it watches, so cargo watches nothing else
    // unless told: a command added to the list must regenerate its permission.
    println!("cargo:rerun-if-changed=src/command_names.rs");
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(APP_COMMANDS));
    tauri_build::try_build(attributes).expect("tauri build step");
}
