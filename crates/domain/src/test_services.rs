//! The services a repository's tests need beside the agent (a database, a small
//! server), as `.handoff/services.yml` names them in Docker Compose's words: each
//! service's `image` or `build` (a folder with its Dockerfile, or a context and a
//! `dockerfile`), its `environment` and its `command`. Handoff starts them for each
//! Docker run on the run's own network, where the agent reaches each by its name and
//! none reaches out. What Handoff does not use of a service (`ports`, `volumes`,
//! `depends_on`, …) is said as a note, never silently dropped.

use std::collections::BTreeMap;

use serde_json::Value;
use thiserror::Error;

use crate::dev_container::CommandForm;
use crate::repository_path::beside_file;

/// Where a repository names its test services.
pub const SERVICES_FILE: &str = ".handoff/services.yml";

/// The most services one run starts.
pub const MOST_SERVICES: usize = 8;

/// What Compose may say of a service that Handoff reads.
const READ_FIELDS: [&str; 4] = ["image", "build", "environment", "command"];

/// One service the tests reach by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestService {
    /// Its name, which is also its host name on the run's network.
    pub name: String,
    pub source: ServiceSource,
    pub environment: BTreeMap<String, String>,
    pub command: Option<CommandForm>,
}

/// What a service's container is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceSource {
    /// An image by name.
    Image(String),
    /// A Dockerfile and its context, as paths from the repository's root.
    Build { context: String, dockerfile: String },
}

/// The services of a repository, and what Handoff leaves out of them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TestServices {
    pub services: Vec<TestService>,
    pub notes: Vec<String>,
}

impl TestServices {
    /// Adds `more` (the services of a dev container's Compose files) to these (the
    /// services file's); refused when both name one service, or when together they are
    /// more than a run starts.
    pub fn add(&mut self, more: TestServices) -> Result<(), ServicesError> {
        if let Some(twice) = more
            .services
            .iter()
            .find(|service| self.services.iter().any(|mine| mine.name == service.name))
        {
            return Err(ServicesError::NamedTwice {
                name: twice.name.clone(),
            });
        }
        let count = self.services.len() + more.services.len();
        if count > MOST_SERVICES {
            return Err(ServicesError::TooMany {
                file: format!("{SERVICES_FILE} with the dev container's Compose files"),
                count,
            });
        }
        self.services.extend(more.services);
        self.notes.extend(more.notes);
        Ok(())
    }
}

/// Why a services file cannot be used. No run starts on a refused one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ServicesError {
    #[error("{file} is not YAML: {detail}")]
    NotYaml { file: String, detail: String },
    #[error("{file} has no \"services\" map of named services")]
    NoServices { file: String },
    #[error("{file} names {count} services: a run starts at most {MOST_SERVICES}")]
    TooMany { file: String, count: usize },
    #[error(
        "{file}: {name:?} is not a name the run's network takes as a host name (lower-case \
         letters, digits and '-', starting with a letter)"
    )]
    BadName { file: String, name: String },
    #[error("{file}: the service {name} has neither \"image\" nor \"build\"")]
    NoImage { file: String, name: String },
    #[error("{file}: the service {name}: \"{field}\" must be {expected}")]
    BadField {
        file: String,
        name: String,
        field: String,
        expected: &'static str,
    },
    #[error("{file}: the service {name} builds from {path}, which is not on the base branch")]
    MissingDockerfile {
        file: String,
        name: String,
        path: String,
    },
    #[error(
        "the service {name} is named both in {SERVICES_FILE} and in the dev container's \
         Compose files: keep one"
    )]
    NamedTwice { name: String },
    #[error("{files} names no service {name}")]
    NoSuchService { files: String, name: String },
    #[error("{file}: the service {name} names {path}, which is outside the repository")]
    PathOutsideRepository {
        file: String,
        name: String,
        path: String,
    },
}

/// Reads the services file `file` (its text is `text`); `exists` says whether a file it
/// names is on the base branch.
pub fn read_services(
    file: &str,
    text: &str,
    exists: impl Fn(&str) -> bool,
) -> Result<TestServices, ServicesError> {
    let value: Value = serde_saphyr::from_str(text).map_err(|error| ServicesError::NotYaml {
        file: file.to_owned(),
        detail: error
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
    })?;
    let Some(services) = value.get("services").and_then(Value::as_object) else {
        return Err(ServicesError::NoServices {
            file: file.to_owned(),
        });
    };
    if services.len() > MOST_SERVICES {
        return Err(ServicesError::TooMany {
            file: file.to_owned(),
            count: services.len(),
        });
    }
    let mut read = TestServices::default();
    for (name, settings) in services {
        let service = OneService {
            file,
            name,
            settings: settings
                .as_object()
                .ok_or_else(|| ServicesError::BadField {
                    file: file.to_owned(),
                    name: name.clone(),
                    field: name.clone(),
                    expected: "a map of the service's settings",
                })?,
        };
        read.services.push(service.read(&exists)?);
        read.notes.extend(service.notes());
    }
    Ok(read)
}

/// One service's settings, read.
struct OneService<'a> {
    file: &'a str,
    name: &'a str,
    settings: &'a serde_json::Map<String, Value>,
}

impl OneService<'_> {
    fn bad(&self, field: &str, expected: &'static str) -> ServicesError {
        ServicesError::BadField {
            file: self.file.to_owned(),
            name: self.name.to_owned(),
            field: field.to_owned(),
            expected,
        }
    }

    fn read(&self, exists: &impl Fn(&str) -> bool) -> Result<TestService, ServicesError> {
        let name_is_a_host_name = self.name.len() <= 63
            && self.name.starts_with(|c: char| c.is_ascii_lowercase())
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !name_is_a_host_name {
            return Err(ServicesError::BadName {
                file: self.file.to_owned(),
                name: self.name.to_owned(),
            });
        }
        Ok(TestService {
            name: self.name.to_owned(),
            source: self.source(exists)?,
            environment: self.environment()?,
            command: self.command()?,
        })
    }

    fn source(&self, exists: &impl Fn(&str) -> bool) -> Result<ServiceSource, ServicesError> {
        let (context, dockerfile) = match (self.settings.get("image"), self.settings.get("build")) {
            (_, Some(Value::String(context))) => (context.clone(), "Dockerfile".to_owned()),
            (_, Some(Value::Object(build))) => {
                let text =
                    |field: &str| build.get(field).and_then(Value::as_str).map(str::to_owned);
                (
                    text("context").unwrap_or_else(|| ".".to_owned()),
                    text("dockerfile").unwrap_or_else(|| "Dockerfile".to_owned()),
                )
            }
            (_, Some(_)) => {
                return Err(self.bad(
                    "build",
                    "a folder, or a map with \"context\" and \"dockerfile\"",
                ))
            }
            (Some(Value::String(image)), None) if !image.trim().is_empty() => {
                return Ok(ServiceSource::Image(image.trim().to_owned()))
            }
            (Some(_), None) => return Err(self.bad("image", "an image's name")),
            (None, None) => {
                return Err(ServicesError::NoImage {
                    file: self.file.to_owned(),
                    name: self.name.to_owned(),
                })
            }
        };
        let outside = |path: &str| ServicesError::PathOutsideRepository {
            file: self.file.to_owned(),
            name: self.name.to_owned(),
            path: path.to_owned(),
        };
        let context = beside_file(self.file, &context).ok_or_else(|| outside(&context))?;
        let dockerfile_path = beside_file(&format!("{context}/."), &dockerfile)
            .ok_or_else(|| outside(&dockerfile))?;
        if !exists(&dockerfile_path) {
            return Err(ServicesError::MissingDockerfile {
                file: self.file.to_owned(),
                name: self.name.to_owned(),
                path: dockerfile_path,
            });
        }
        Ok(ServiceSource::Build {
            context,
            dockerfile: dockerfile_path,
        })
    }

    /// `environment`: a map, or a list of `NAME=value`.
    fn environment(&self) -> Result<BTreeMap<String, String>, ServicesError> {
        let expected = "a map of names to values, or a list of NAME=value";
        let scalar = |value: &Value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            Value::Bool(flag) => Some(flag.to_string()),
            _ => None,
        };
        match self.settings.get("environment") {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| {
                    scalar(value)
                        .map(|value| (name.clone(), value))
                        .ok_or_else(|| self.bad("environment", expected))
                })
                .collect(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|entry| {
                    entry
                        .as_str()
                        .and_then(|entry| entry.split_once('='))
                        .map(|(name, value)| (name.to_owned(), value.to_owned()))
                        .ok_or_else(|| self.bad("environment", expected))
                })
                .collect(),
            Some(_) => Err(self.bad("environment", expected)),
        }
    }

    /// `command`: a line for the shell, or a program and its arguments.
    fn command(&self) -> Result<Option<CommandForm>, ServicesError> {
        let expected = "a command line, or a list of a program and its arguments";
        match self.settings.get("command") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(line)) => Ok(Some(CommandForm::Shell(line.clone()))),
            Some(Value::Array(words)) => words
                .iter()
                .map(|word| word.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .filter(|words| !words.is_empty())
                .map(|words| Some(CommandForm::Program(words)))
                .ok_or_else(|| self.bad("command", expected)),
            Some(_) => Err(self.bad("command", expected)),
        }
    }

    /// What Handoff does not use of this service, said to the owner.
    fn notes(&self) -> Vec<String> {
        self.settings
            .keys()
            .filter(|field| !READ_FIELDS.contains(&field.as_str()))
            .map(|field| {
                format!(
                    "the service {}: \"{field}\" is not used (services are reached by name on the run's own network)",
                    self.name
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_are_read_in_composes_words_with_their_paths_from_the_root() {
        let text = "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: test\n      PORT: 5432\n    ports: [\"5432:5432\"]\n  web:\n    build: services/web\n    command: [\"git\", \"daemon\", \"--export-all\"]\n    environment: [\"MODE=test\"]\n";
        let read = read_services(SERVICES_FILE, text, |path| {
            path == ".handoff/services/web/Dockerfile"
        })
        .unwrap();
        assert_eq!(read.services.len(), 2);
        assert_eq!(read.services[0].name, "db");
        assert_eq!(
            read.services[0].source,
            ServiceSource::Image("postgres:16".to_owned())
        );
        assert_eq!(read.services[0].environment["PORT"], "5432");
        assert_eq!(
            read.services[1].source,
            ServiceSource::Build {
                context: ".handoff/services/web".to_owned(),
                dockerfile: ".handoff/services/web/Dockerfile".to_owned()
            }
        );
        assert_eq!(read.services[1].environment["MODE"], "test");
        assert!(
            matches!(read.services[1].command, Some(CommandForm::Program(ref words)) if words[0] == "git")
        );
        assert_eq!(read.notes.len(), 1, "{:?}", read.notes);
        assert!(read.notes[0].contains("\"ports\""), "{:?}", read.notes);
    }

    #[test]
    fn a_services_file_that_cannot_be_used_is_refused_saying_what_and_where() {
        let refused = |text: &str| {
            read_services(SERVICES_FILE, text, |_| false)
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused("services: [\n").contains("is not YAML"),
            "{}",
            refused("services: [\n")
        );
        assert!(refused("version: 3\n").contains("no \"services\" map"));
        assert!(refused("services:\n  Web_1:\n    image: x\n").contains("\"Web_1\" is not a name"));
        assert!(refused("services:\n  web:\n    ports: []\n")
            .contains("neither \"image\" nor \"build\""));
        assert!(refused("services:\n  web:\n    build: web\n")
            .contains("builds from .handoff/web/Dockerfile, which is not on the base branch"));
        assert!(
            refused("services:\n  web:\n    build: ../../up\n").contains("outside the repository")
        );
        assert!(refused("services:\n  web:\n    image: x\n    command: 3\n")
            .contains("\"command\" must be"));
    }

    #[test]
    fn a_service_named_both_in_the_services_file_and_a_compose_file_is_refused() {
        let read = |text: &str| read_services(SERVICES_FILE, text, |_| false).unwrap();
        let mut mine = read("services:\n  db:\n    image: postgres:16\n");
        let refused = mine
            .add(read("services:\n  db:\n    image: postgres:15\n"))
            .unwrap_err();
        assert_eq!(
            refused,
            ServicesError::NamedTwice {
                name: "db".to_owned()
            }
        );
        mine.add(read("services:\n  cache:\n    image: redis:7\n"))
            .unwrap();
        assert_eq!(mine.services.len(), 2);
    }
}
