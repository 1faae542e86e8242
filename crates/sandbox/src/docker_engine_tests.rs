//! Finding the engine on machines of the tests' own: variables, files and sockets.

use std::collections::HashMap;

use super::*;

/// A machine with `variables`, `files` (path and text) and `sockets` that exist.
struct Machine {
    variables: HashMap<&'static str, String>,
    files: HashMap<PathBuf, String>,
    sockets: Vec<PathBuf>,
    os: &'static str,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            variables: HashMap::new(),
            files: HashMap::new(),
            sockets: Vec::new(),
            os: "macos",
        }
    }

    fn engine(&self) -> EngineAddress {
        let variable = |name: &str| self.variables.get(name).cloned();
        let exists = |path: &Path| self.sockets.iter().any(|socket| socket == path);
        let read = |path: &Path| self.files.get(path).cloned();
        find_engine(&MachineView {
            variable: &variable,
            home: Some(PathBuf::from("/Users/me")),
            exists: &exists,
            read: &read,
            os: self.os,
        })
    }

    /// A context named `name` whose engine is at `host`, as `docker context create` writes it.
    fn with_context(mut self, name: &str, host: &str) -> Machine {
        let folder: String = Sha256::digest(name.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        self.files.insert(
            PathBuf::from(format!("/Users/me/.docker/contexts/meta/{folder}/meta.json")),
            format!(
                r#"{{"Name":"{name}","Metadata":{{}},"Endpoints":{{"docker":{{"Host":"{host}","SkipTLSVerify":false}}}}}}"#
            ),
        );
        self
    }

    fn current_context(mut self, name: &str) -> Machine {
        self.files.insert(
            PathBuf::from("/Users/me/.docker/config.json"),
            format!(r#"{{"auths":{{}},"currentContext":"{name}"}}"#),
        );
        self
    }
}

#[test]
fn docker_host_comes_first() {
    let mut machine = Machine::new()
        .with_context("colima", "unix:///Users/me/.colima/default/docker.sock")
        .current_context("colima");
    machine
        .variables
        .insert("DOCKER_HOST", "tcp://10.0.0.5:2375".to_owned());
    assert_eq!(
        machine.engine(),
        EngineAddress {
            address: "tcp://10.0.0.5:2375".to_owned(),
            source: EngineSource::DockerHostVariable,
        }
    );
}

#[test]
fn the_current_context_names_the_engine() {
    let machine = Machine::new()
        .with_context("colima", "unix:///Users/me/.colima/default/docker.sock")
        .current_context("colima");
    let engine = machine.engine();
    assert_eq!(
        engine.address,
        "unix:///Users/me/.colima/default/docker.sock"
    );
    assert_eq!(
        engine.describe(),
        "unix:///Users/me/.colima/default/docker.sock (the current Docker context \"colima\")"
    );
}

#[test]
fn docker_context_chooses_over_the_config_file() {
    let mut machine = Machine::new()
        .with_context("colima", "unix:///Users/me/.colima/default/docker.sock")
        .with_context("orbstack", "unix:///Users/me/.orbstack/run/docker.sock")
        .current_context("colima");
    machine
        .variables
        .insert("DOCKER_CONTEXT", "orbstack".to_owned());
    let engine = machine.engine();
    assert_eq!(engine.address, "unix:///Users/me/.orbstack/run/docker.sock");
    assert_eq!(
        engine.source,
        EngineSource::Context {
            name: "orbstack".to_owned(),
            from_variable: true
        }
    );
}

#[test]
fn the_default_context_or_a_context_without_its_file_falls_back_to_the_sockets() {
    let mut machine = Machine::new().current_context("default");
    machine
        .sockets
        .push(PathBuf::from("/Users/me/.docker/run/docker.sock"));
    assert_eq!(
        machine.engine().describe(),
        "unix:///Users/me/.docker/run/docker.sock (Docker Desktop's socket)"
    );
    let mut missing = Machine::new().current_context("gone");
    missing
        .sockets
        .push(PathBuf::from("/Users/me/.colima/default/docker.sock"));
    assert_eq!(
        missing.engine().source,
        EngineSource::KnownSocket { engine: "colima" }
    );
}

#[test]
fn the_known_sockets_are_tried_in_order() {
    let mut machine = Machine::new();
    machine.os = "linux";
    machine
        .variables
        .insert("XDG_RUNTIME_DIR", "/run/user/1000".to_owned());
    machine
        .sockets
        .push(PathBuf::from("/run/user/1000/podman/podman.sock"));
    assert_eq!(
        machine.engine(),
        EngineAddress {
            address: "unix:///run/user/1000/podman/podman.sock".to_owned(),
            source: EngineSource::KnownSocket { engine: "Podman" },
        }
    );
    machine
        .sockets
        .push(PathBuf::from("/run/user/1000/docker.sock"));
    assert_eq!(
        machine.engine().source,
        EngineSource::KnownSocket {
            engine: "rootless Docker"
        }
    );
    machine.sockets.push(PathBuf::from("/var/run/docker.sock"));
    assert_eq!(machine.engine().address, "unix:///var/run/docker.sock");
}

#[test]
fn with_nothing_found_the_default_address_is_tried() {
    let machine = Machine::new();
    assert_eq!(
        machine.engine(),
        EngineAddress {
            address: "unix:///var/run/docker.sock".to_owned(),
            source: EngineSource::Default,
        }
    );
    let mut windows = Machine::new();
    windows.os = "windows";
    assert_eq!(windows.engine().address, "npipe:////./pipe/docker_engine");
}
