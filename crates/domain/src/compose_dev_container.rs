//! A dev container that runs in a Docker Compose service (`dockerComposeFile` and
//! `service`), read into what Handoff builds: the agent's image comes from that
//! service (its `image`, or its `build` with `args` and `target`), its `environment`
//! becomes the agent's, and the file's other services (those `runServices` names, or
//! else all the others) start beside the agent for each run, as test services do, on
//! the run's own network. Several Compose files are read in order; a service a later
//! file names again replaces the earlier one whole, and Handoff says so, because it
//! does not merge a service's fields across files as Compose does.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::dev_container::DevContainerBase;
use crate::test_services::{
    read_services, ServiceSource, ServicesError, TestService, TestServices,
};

/// What a Compose dev container gives the agent and its tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposeAgent {
    /// The agent's image: an image by name, or a Dockerfile (never Compose again).
    pub base: DevContainerBase,
    /// The agent's service's `environment`.
    pub environment: BTreeMap<String, String>,
    /// The services started beside the agent, and what Handoff leaves out of them all.
    pub services: TestServices,
}

/// Reads the Compose files `compose_files` (path and text, in the order the dev
/// container names them) for the agent's `service` and the `run_services` beside it
/// (all the others when none is named); `exists` says whether a file is on the base
/// branch.
pub fn read_compose_dev_container(
    compose_files: &[(String, String)],
    service: &str,
    run_services: &[String],
    exists: impl Fn(&str) -> bool,
) -> Result<ComposeAgent, ServicesError> {
    let mut notes = Vec::new();
    let mut named = services_by_name(compose_files, &exists, &mut notes)?;
    let files = || {
        compose_files
            .iter()
            .map(|(file, _)| file.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (agent, _, agent_settings) =
        named
            .remove(service)
            .ok_or_else(|| ServicesError::NoSuchService {
                files: files(),
                name: service.to_owned(),
            })?;
    if agent.command.is_some() {
        notes.push(format!(
            "the service {service}: \"command\" is not run: the agent runs in it"
        ));
    }
    let base = match agent.source {
        ServiceSource::Image(image) => DevContainerBase::Image(image),
        ServiceSource::Build {
            context,
            dockerfile,
        } => {
            let build = &agent_settings["build"];
            DevContainerBase::Dockerfile {
                dockerfile,
                context,
                args: build_args(build),
                target: build["target"].as_str().map(str::to_owned),
            }
        }
    };
    let mut services = Vec::new();
    if run_services.is_empty() {
        services.extend(named.into_values().map(|(one, _, _)| one));
    } else {
        for name in run_services.iter().filter(|name| name.as_str() != service) {
            let (one, _, _) = named
                .remove(name)
                .ok_or_else(|| ServicesError::NoSuchService {
                    files: files(),
                    name: name.clone(),
                })?;
            services.push(one);
        }
        notes.extend(named.keys().map(|name| {
            format!("the service {name} is not started: \"runServices\" does not name it")
        }));
    }
    Ok(ComposeAgent {
        base,
        environment: agent.environment,
        services: TestServices { services, notes },
    })
}

/// A service as a Compose file names it: read, the file, and its settings there.
type NamedService = (TestService, String, Value);

/// Each service of `compose_files` by name, with the file that last named it and its
/// settings there; what Handoff leaves out of them goes to `notes`.
fn services_by_name(
    compose_files: &[(String, String)],
    exists: &impl Fn(&str) -> bool,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<String, NamedService>, ServicesError> {
    let mut named: BTreeMap<String, NamedService> = BTreeMap::new();
    for (file, text) in compose_files {
        let read = read_services(file, text, exists)?;
        notes.extend(read.notes);
        let settings: Value = serde_saphyr::from_str(text).unwrap_or(Value::Null);
        for one in read.services {
            let raw = settings["services"][&one.name].clone();
            if let Some((_, earlier, _)) = named.get(&one.name) {
                notes.push(format!(
                    "the service {} of {file} replaces the one of {earlier} whole: Handoff does not merge a service's settings across Compose files",
                    one.name
                ));
            }
            named.insert(one.name.clone(), (one, file.clone(), raw));
        }
    }
    Ok(named)
}

/// A Compose `build`'s `args`: a map, or a list of `NAME=value`; values that are not
/// text are written as Compose writes them.
fn build_args(build: &Value) -> BTreeMap<String, String> {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match &build["args"] {
        Value::Object(map) => map
            .iter()
            .map(|(name, value)| (name.clone(), text(value)))
            .collect(),
        Value::Array(list) => list
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|entry| entry.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
        _ => BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPOSE: &str = "services:\n  app:\n    build:\n      context: ..\n      dockerfile: .devcontainer/Dockerfile\n      args:\n        NODE: 20\n      target: dev\n    environment:\n      DATABASE_URL: postgres://db/test\n    command: sleep infinity\n    volumes: [\"..:/workspace\"]\n  db:\n    image: postgres:16\n  cache:\n    image: redis:7\n";

    fn compose(run_services: &[&str]) -> Result<ComposeAgent, ServicesError> {
        read_compose_dev_container(
            &[(".devcontainer/compose.yml".to_owned(), COMPOSE.to_owned())],
            "app",
            &run_services
                .iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>(),
            |path| path == ".devcontainer/Dockerfile",
        )
    }

    #[test]
    fn the_agent_runs_in_its_service_and_the_others_start_beside_it() {
        let agent = compose(&[]).unwrap();
        assert_eq!(
            agent.base,
            DevContainerBase::Dockerfile {
                dockerfile: ".devcontainer/Dockerfile".to_owned(),
                context: ".".to_owned(),
                args: BTreeMap::from([("NODE".to_owned(), "20".to_owned())]),
                target: Some("dev".to_owned()),
            }
        );
        assert_eq!(agent.environment["DATABASE_URL"], "postgres://db/test");
        let names: Vec<&str> = agent
            .services
            .services
            .iter()
            .map(|service| service.name.as_str())
            .collect();
        assert_eq!(names, ["cache", "db"]);
        let notes = agent.services.notes.join("\n");
        assert!(notes.contains("\"command\" is not run"), "{notes}");
        assert!(notes.contains("\"volumes\" is not used"), "{notes}");
    }

    #[test]
    fn run_services_names_which_start_and_the_rest_are_said_not_to() {
        let agent = compose(&["db"]).unwrap();
        assert_eq!(agent.services.services.len(), 1);
        assert_eq!(agent.services.services[0].name, "db");
        assert!(agent
            .services
            .notes
            .iter()
            .any(|note| note.contains("cache is not started")));
        let unknown = compose(&["queue"]).unwrap_err().to_string();
        assert!(unknown.contains("names no service queue"), "{unknown}");
    }

    #[test]
    fn an_agent_service_the_files_lack_is_refused_by_name() {
        let refused = read_compose_dev_container(
            &[(
                ".devcontainer/compose.yml".to_owned(),
                "services:\n  db:\n    image: postgres:16\n".to_owned(),
            )],
            "app",
            &[],
            |_| false,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(refused, ".devcontainer/compose.yml names no service app");
    }

    #[test]
    fn a_later_compose_file_replaces_a_service_whole_and_says_so() {
        let agent = read_compose_dev_container(
            &[
                (
                    "compose.yml".to_owned(),
                    "services:\n  app:\n    image: debian:12\n  db:\n    image: postgres:15\n"
                        .to_owned(),
                ),
                (
                    "compose.dev.yml".to_owned(),
                    "services:\n  db:\n    image: postgres:16\n".to_owned(),
                ),
            ],
            "app",
            &[],
            |_| false,
        )
        .unwrap();
        assert_eq!(agent.base, DevContainerBase::Image("debian:12".to_owned()));
        assert_eq!(
            agent.services.services[0].source,
            ServiceSource::Image("postgres:16".to_owned())
        );
        assert!(agent.services.notes[0].contains("replaces the one of compose.yml whole"));
    }
}
