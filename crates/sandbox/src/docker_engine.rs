//! Finding the Docker engine the way the `docker` command finds it, so that an app
//! started from the macOS Dock (which sees none of the shell's variables) or a machine
//! whose engine is colima, OrbStack, Podman or rootless Docker reaches the same engine
//! the owner's terminal does.
//!
//! In order: `DOCKER_HOST`; the current Docker context (`DOCKER_CONTEXT`, else
//! `currentContext` in `~/.docker/config.json`, whose endpoint is in
//! `~/.docker/contexts/meta/<sha256 of its name>/meta.json`); then the first socket of the
//! known engines that exists on this machine; then the platform's default address (on
//! Windows the `docker_engine` pipe).

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// Where the engine was found, for Check setup's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineSource {
    /// The `DOCKER_HOST` variable.
    DockerHostVariable,
    /// A Docker context: its name, and whether `DOCKER_CONTEXT` chose it.
    Context { name: String, from_variable: bool },
    /// A known engine's socket: "colima", "OrbStack"…
    KnownSocket { engine: &'static str },
    /// Nothing else: the platform's default address.
    Default,
}

/// The engine's address (`unix:///…`, `npipe:////./pipe/…`, `tcp://…`) and where it
/// was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineAddress {
    pub address: String,
    pub source: EngineSource,
}

impl EngineAddress {
    /// "unix:///home/me/.colima/default/docker.sock (colima's socket)".
    pub fn describe(&self) -> String {
        let whence = match &self.source {
            EngineSource::DockerHostVariable => "from DOCKER_HOST".to_owned(),
            EngineSource::Context {
                name,
                from_variable: true,
            } => format!("the Docker context {name:?}, from DOCKER_CONTEXT"),
            EngineSource::Context { name, .. } => format!("the current Docker context {name:?}"),
            EngineSource::KnownSocket { engine } => format!("{engine}'s socket"),
            EngineSource::Default => "the default address".to_owned(),
        };
        format!("{} ({whence})", self.address)
    }
}

/// What discovery reads from the machine: variables, the home folder, and which files
/// exist (so tests can give it a machine of their own).
pub struct MachineView<'a> {
    pub variable: &'a dyn Fn(&str) -> Option<String>,
    pub home: Option<PathBuf>,
    pub exists: &'a dyn Fn(&Path) -> bool,
    pub read: &'a dyn Fn(&Path) -> Option<String>,
    /// `windows`, `macos`, `linux`…
    pub os: &'a str,
}

impl std::fmt::Debug for MachineView<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("MachineView")
            .field("home", &self.home)
            .field("os", &self.os)
            .finish_non_exhaustive()
    }
}

/// The known engines' sockets, in the order they are tried: `~` is the home folder and
/// `$XDG_RUNTIME_DIR` the user's runtime folder.
const KNOWN_SOCKETS: &[(&str, &str)] = &[
    ("Docker", "/var/run/docker.sock"),
    ("Docker Desktop", "~/.docker/run/docker.sock"),
    ("Docker Desktop", "~/.docker/desktop/docker.sock"),
    ("colima", "~/.colima/default/docker.sock"),
    ("colima", "~/.colima/docker.sock"),
    ("OrbStack", "~/.orbstack/run/docker.sock"),
    ("rootless Docker", "$XDG_RUNTIME_DIR/docker.sock"),
    ("Podman", "$XDG_RUNTIME_DIR/podman/podman.sock"),
    (
        "Podman",
        "~/.local/share/containers/podman/machine/podman.sock",
    ),
];

/// The engine `machine` would reach, as the `docker` command finds it.
pub fn find_engine(machine: &MachineView<'_>) -> EngineAddress {
    if let Some(host) = (machine.variable)("DOCKER_HOST").filter(|host| !host.trim().is_empty()) {
        return EngineAddress {
            address: host.trim().to_owned(),
            source: EngineSource::DockerHostVariable,
        };
    }
    if let Some(found) = context_engine(machine) {
        return found;
    }
    if machine.os == "windows" {
        // Windows has pipes, not sockets: the `docker` command's default one (Docker
        // Desktop names its Linux engine's own pipe in its context, found above).
        return EngineAddress {
            address: "npipe:////./pipe/docker_engine".to_owned(),
            source: EngineSource::Default,
        };
    }
    for (engine, pattern) in KNOWN_SOCKETS {
        let Some(path) = socket_path(machine, pattern) else {
            continue;
        };
        if (machine.exists)(&path) {
            return EngineAddress {
                address: format!("unix://{}", path.display()),
                source: EngineSource::KnownSocket { engine },
            };
        }
    }
    EngineAddress {
        address: "unix:///var/run/docker.sock".to_owned(),
        source: EngineSource::Default,
    }
}

/// `pattern` with `~` and `$XDG_RUNTIME_DIR` filled in, when they are known. Sockets are
/// Unix paths, so the parts are joined by `/` whatever machine this code runs on.
fn socket_path(machine: &MachineView<'_>, pattern: &str) -> Option<PathBuf> {
    let under = |folder: &str, rest: &str| {
        PathBuf::from(format!("{}/{rest}", folder.trim_end_matches('/')))
    };
    if let Some(rest) = pattern.strip_prefix("~/") {
        return machine
            .home
            .as_ref()
            .map(|home| under(&home.to_string_lossy(), rest));
    }
    if let Some(rest) = pattern.strip_prefix("$XDG_RUNTIME_DIR/") {
        return (machine.variable)("XDG_RUNTIME_DIR")
            .filter(|folder| !folder.is_empty())
            .map(|folder| under(&folder, rest));
    }
    Some(PathBuf::from(pattern))
}

/// The current context's engine, when a context other than `default` is chosen.
fn context_engine(machine: &MachineView<'_>) -> Option<EngineAddress> {
    let config_folder = (machine.variable)("DOCKER_CONFIG")
        .filter(|folder| !folder.is_empty())
        .map(PathBuf::from)
        .or_else(|| machine.home.as_ref().map(|home| home.join(".docker")))?;
    let (name, from_variable) = match (machine.variable)("DOCKER_CONTEXT") {
        Some(name) if !name.trim().is_empty() => (name.trim().to_owned(), true),
        _ => {
            let config = (machine.read)(&config_folder.join("config.json"))?;
            let config: serde_json::Value = serde_json::from_str(&config).ok()?;
            (config["currentContext"].as_str()?.to_owned(), false)
        }
    };
    if name == "default" {
        return None;
    }
    let digest = Sha256::digest(name.as_bytes());
    let folder: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    let meta = (machine.read)(
        &config_folder
            .join("contexts")
            .join("meta")
            .join(folder)
            .join("meta.json"),
    )?;
    let meta: serde_json::Value = serde_json::from_str(&meta).ok()?;
    let host = meta["Endpoints"]["docker"]["Host"].as_str()?;
    Some(EngineAddress {
        address: host.to_owned(),
        source: EngineSource::Context {
            name,
            from_variable,
        },
    })
}

/// The engine this machine reaches.
pub fn this_machines_engine() -> EngineAddress {
    let variable = |name: &str| std::env::var(name).ok();
    let exists = |path: &Path| path.exists();
    let read = |path: &Path| std::fs::read_to_string(path).ok();
    find_engine(&MachineView {
        variable: &variable,
        home: dirs::home_dir(),
        exists: &exists,
        read: &read,
        os: std::env::consts::OS,
    })
}

/// A client of this machine's engine, and where it was found.
pub fn connect_to_engine() -> Result<(bollard::Docker, EngineAddress), bollard::errors::Error> {
    let engine = this_machines_engine();
    let docker = bollard::Docker::connect_with_host(&engine.address)?;
    Ok((docker, engine))
}

#[cfg(test)]
#[path = "docker_engine_tests.rs"]
mod tests;
