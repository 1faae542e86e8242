//! A dev container's features: what `features` asks for (a reference and its options),
//! where each is fetched from (an OCI registry such as `ghcr.io`, an address of a
//! `.tgz`, or a folder beside the dev container), what a feature's own
//! `devcontainer-feature.json` says (its options' defaults, the variables it sets, the
//! features it depends on or installs after), the variables its `install.sh` is run
//! with, and the order they are installed in.
//!
//! Fetching them is the sandbox crate's; building them in is the agent layer's.

use std::collections::BTreeMap;

use serde_json::Value;

/// One feature a dev container asks for: its reference as written, and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureRequest {
    /// As written in `features` (`ghcr.io/devcontainers/features/node:1`, `./local`).
    pub reference: String,
    pub source: FeatureSource,
    /// The options given, as the text each is handed to `install.sh` as.
    pub options: BTreeMap<String, String>,
}

/// Where a feature is fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeatureSource {
    /// An OCI artifact on a registry.
    Registry(RegistryReference),
    /// An `https://` address of a feature's `.tgz` (`http://` on this machine only).
    Tarball(String),
    /// A folder of the repository (a path from its root), beside the dev container.
    Local(String),
}

/// A feature on an OCI registry: `registry/repository:tag` or `…@sha256:…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryReference {
    /// The registry's host, with its port when it has one (`ghcr.io`, `localhost:5000`).
    pub registry: String,
    /// The path on the registry (`devcontainers/features/node`).
    pub repository: String,
    /// A tag (`1`, `latest`) or a digest (`sha256:…`).
    pub version: String,
}

impl RegistryReference {
    /// Whether the registry is on this machine, where registries are spoken to over
    /// plain HTTP (as Docker's engine does with a registry on `localhost`).
    pub fn is_on_this_machine(&self) -> bool {
        let host = match self.registry.rsplit_once(':') {
            Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
            _ => self.registry.as_str(),
        };
        matches!(host, "localhost" | "127.0.0.1" | "[::1]")
    }
}

impl FeatureSource {
    /// The feature itself, whatever version is asked for: what `installsAfter` and
    /// `dependsOn` name.
    pub fn identity(&self) -> String {
        match self {
            FeatureSource::Registry(reference) => {
                format!("{}/{}", reference.registry, reference.repository).to_lowercase()
            }
            FeatureSource::Tarball(address) => address.clone(),
            FeatureSource::Local(path) => path.clone(),
        }
    }
}

/// Where `reference` is fetched from; `dev_container_file` is the file that names it
/// (a local feature's path is read from its folder). An error says, in words, why
/// the reference names no feature Handoff can fetch.
pub fn feature_source(reference: &str, dev_container_file: &str) -> Result<FeatureSource, String> {
    if reference.starts_with("./") || reference.starts_with("../") {
        return crate::repository_path::beside_file(dev_container_file, reference)
            .filter(|path| path != ".")
            .map(FeatureSource::Local)
            .ok_or_else(|| "its folder is outside the repository".to_owned());
    }
    if let Some(rest) = reference
        .strip_prefix("https://")
        .or_else(|| reference.strip_prefix("http://"))
    {
        let Some((host, _)) = rest
            .split_once('/')
            .filter(|_| !rest.contains(char::is_whitespace))
        else {
            return Err("it is not the address of a feature's .tgz".to_owned());
        };
        // Plain HTTP only to this machine, as for registries.
        let on_this_machine = RegistryReference {
            registry: host.to_owned(),
            repository: String::new(),
            version: String::new(),
        }
        .is_on_this_machine();
        if reference.starts_with("http://") && !on_this_machine {
            return Err("a feature's .tgz is fetched over https:// only".to_owned());
        }
        return Ok(FeatureSource::Tarball(reference.to_owned()));
    }
    registry_reference(reference).map(FeatureSource::Registry)
}

fn registry_reference(reference: &str) -> Result<RegistryReference, String> {
    let (name, version) = if let Some((name, digest)) = reference.split_once('@') {
        (name, digest.to_owned())
    } else {
        let last_slash = reference.rfind('/').unwrap_or(0);
        match reference[last_slash..].rfind(':') {
            Some(colon) => (
                &reference[..last_slash + colon],
                reference[last_slash + colon + 1..].to_owned(),
            ),
            None => (reference, "latest".to_owned()),
        }
    };
    let Some((registry, repository)) = name.split_once('/') else {
        return Err(
            "it names no registry: features of the first, unversioned kind are gone; use its ghcr.io/devcontainers/features/ reference".to_owned(),
        );
    };
    let names_a_host = registry.contains('.') || registry.contains(':') || registry == "localhost";
    if !names_a_host || repository.is_empty() || version.is_empty() {
        return Err(
            "it is not a registry's reference (registry/path/feature:version), such as ghcr.io/devcontainers/features/node:1".to_owned(),
        );
    }
    let well_formed = repository.split('/').all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    }) && version
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-:".contains(c));
    if !well_formed {
        return Err("its path or version holds characters a registry does not allow".to_owned());
    }
    Ok(RegistryReference {
        registry: registry.to_owned(),
        repository: repository.to_lowercase(),
        version,
    })
}

/// The options of a feature as `features` gives them: an object of options, or a
/// text that is its `version` option. `None` for any other value.
pub fn feature_options(value: &Value) -> Option<BTreeMap<String, String>> {
    match value {
        Value::Object(options) => options
            .iter()
            .map(|(name, value)| option_text(value).map(|text| (name.clone(), text)))
            .collect(),
        Value::String(version) => Some(BTreeMap::from([("version".to_owned(), version.clone())])),
        Value::Bool(true) => Some(BTreeMap::new()),
        _ => None,
    }
}

fn option_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// What a feature's `devcontainer-feature.json` says that Handoff uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeatureMetadata {
    pub id: String,
    pub version: String,
    /// Each option's default, as text.
    pub option_defaults: BTreeMap<String, String>,
    /// Variables every process of the image gets once it is installed.
    pub container_env: BTreeMap<String, String>,
    /// Features it needs, installed before it (fetched when not asked for).
    pub depends_on: Vec<(String, BTreeMap<String, String>)>,
    /// Features it is installed after when they are asked for too (by identity).
    pub installs_after: Vec<String>,
    /// What Handoff does not do with it, in words for the owner.
    pub notes: Vec<String>,
}

/// Reads a feature's `devcontainer-feature.json` (JSON with comments).
pub fn read_feature_metadata(text: &str) -> Result<FeatureMetadata, String> {
    let value = crate::jsonc::parse_jsonc(text)
        .map_err(|error| format!("its devcontainer-feature.json is not JSON: {error}"))?;
    let object = value
        .as_object()
        .ok_or("its devcontainer-feature.json holds no object")?;
    let text_of = |field: &str| object.get(field).and_then(Value::as_str).map(str::to_owned);
    let id = text_of("id").ok_or("its devcontainer-feature.json has no \"id\"")?;
    let mut metadata = FeatureMetadata {
        version: text_of("version").unwrap_or_default(),
        ..FeatureMetadata::default()
    };
    if let Some(options) = object.get("options").and_then(Value::as_object) {
        for (name, option) in options {
            if let Some(default) = option.get("default").and_then(option_text) {
                metadata.option_defaults.insert(name.clone(), default);
            }
        }
    }
    if let Some(variables) = object.get("containerEnv").and_then(Value::as_object) {
        for (name, value) in variables {
            if let Some(value) = value.as_str() {
                metadata
                    .container_env
                    .insert(name.clone(), value.to_owned());
            }
        }
    }
    if let Some(needed) = object.get("dependsOn").and_then(Value::as_object) {
        for (reference, options) in needed {
            let options = feature_options(options).ok_or_else(|| {
                format!("its \"dependsOn\" gives {reference} options that are not an object")
            })?;
            metadata.depends_on.push((reference.clone(), options));
        }
    }
    if let Some(after) = object.get("installsAfter").and_then(Value::as_array) {
        for reference in after.iter().filter_map(Value::as_str) {
            if let Ok(source) = feature_source(reference, "") {
                metadata.installs_after.push(source.identity());
            }
        }
    }
    metadata.notes = metadata_notes(&id, object);
    metadata.id = id;
    Ok(metadata)
}

/// What a feature asks of the container that Handoff never gives it.
fn metadata_notes(id: &str, object: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut notes = Vec::new();
    for (field, what) in [
        ("privileged", "a privileged container"),
        ("capAdd", "added capabilities"),
        ("securityOpt", "security options"),
        ("mounts", "mounts"),
        ("entrypoint", "an entry point"),
        ("init", "an init process"),
    ] {
        if object
            .get(field)
            .is_some_and(|value| value != &Value::Bool(false))
        {
            notes.push(format!(
                "the feature {id} asks for {what} (\"{field}\"), which Handoff's sandbox never gives: what needs it will not work in runs"
            ));
        }
    }
    for field in [
        "onCreateCommand",
        "updateContentCommand",
        "postCreateCommand",
        "postStartCommand",
        "postAttachCommand",
    ] {
        if object.contains_key(field) {
            notes.push(format!(
                "the feature {id} has a {field}, which Handoff does not run"
            ));
        }
    }
    notes
}

/// The name an option is handed to `install.sh` as: upper case, anything but letters,
/// digits and `_` as `_`, and no leading digit.
pub fn option_variable(option: &str) -> String {
    let replaced: String = option
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let leading = replaced
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .count();
    let name = if leading > 0 {
        format!("_{}", &replaced[leading..])
    } else {
        replaced
    };
    name.to_uppercase()
}

/// The variables `install.sh` runs with: every option's default, then the options
/// given, by [`option_variable`]; sorted by name.
pub fn install_variables(
    metadata: &FeatureMetadata,
    options: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut variables: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in metadata.option_defaults.iter().chain(options) {
        variables.insert(option_variable(name), value.clone());
    }
    variables.into_iter().collect()
}

/// The text of the file `install.sh`'s variables are read from by the shell: one
/// `NAME='value'` a line.
pub fn install_variables_file(variables: &[(String, String)]) -> String {
    variables
        .iter()
        .map(|(name, value)| format!("{name}='{}'\n", value.replace('\'', r"'\''")))
        .collect()
}

/// One feature to order: its identity and what it needs before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureToOrder {
    pub identity: String,
    pub depends_on: Vec<String>,
    pub installs_after: Vec<String>,
}

/// The order features are installed in, as indexes into `features`: each after those
/// it depends on and those it installs after (when they are there too); otherwise those
/// named in `first` (`overrideFeatureInstallOrder`) first, in that order, then the rest
/// in the order asked. An error names the features that wait on each other.
pub fn install_order(features: &[FeatureToOrder], first: &[String]) -> Result<Vec<usize>, String> {
    let present = |identity: &str| features.iter().any(|feature| feature.identity == identity);
    let rank = |index: usize| {
        let identity = &features[index].identity;
        first
            .iter()
            .position(|named| named.to_lowercase() == *identity)
            .map_or((1, index), |position| (0, position))
    };
    let mut placed: Vec<usize> = Vec::new();
    while placed.len() < features.len() {
        let is_placed = |identity: &str| {
            placed
                .iter()
                .any(|&index| features[index].identity == identity)
        };
        let next = (0..features.len())
            .filter(|index| !placed.contains(index))
            .filter(|&index| {
                let feature = &features[index];
                feature
                    .depends_on
                    .iter()
                    .chain(&feature.installs_after)
                    .all(|needed| !present(needed) || is_placed(needed))
            })
            .min_by_key(|&index| rank(index));
        match next {
            Some(index) => placed.push(index),
            None => {
                let waiting: Vec<&str> = (0..features.len())
                    .filter(|index| !placed.contains(index))
                    .map(|index| features[index].identity.as_str())
                    .collect();
                return Err(format!(
                    "the features {} wait on each other (dependsOn, installsAfter)",
                    waiting.join(", ")
                ));
            }
        }
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_a_registry_a_tarball_or_a_folder_beside_the_dev_container() {
        let file = ".devcontainer/devcontainer.json";
        assert_eq!(
            feature_source("ghcr.io/devcontainers/features/node:1", file).unwrap(),
            FeatureSource::Registry(RegistryReference {
                registry: "ghcr.io".into(),
                repository: "devcontainers/features/node".into(),
                version: "1".into(),
            })
        );
        let FeatureSource::Registry(on_this_machine) =
            feature_source("localhost:5000/features/hello", file).unwrap()
        else {
            panic!("a registry's feature");
        };
        assert_eq!(on_this_machine.registry, "localhost:5000");
        assert_eq!(on_this_machine.version, "latest");
        assert!(on_this_machine.is_on_this_machine());
        let FeatureSource::Registry(pinned) =
            feature_source("ghcr.io/o/f/go@sha256:abc123", file).unwrap()
        else {
            panic!("a registry's feature");
        };
        assert_eq!(pinned.version, "sha256:abc123");
        assert!(!pinned.is_on_this_machine());
        assert_eq!(
            feature_source("./tools", file).unwrap(),
            FeatureSource::Local(".devcontainer/tools".into())
        );
        assert_eq!(
            feature_source("https://example.com/devcontainer-feature-x.tgz", file).unwrap(),
            FeatureSource::Tarball("https://example.com/devcontainer-feature-x.tgz".into())
        );
        assert!(matches!(
            feature_source("http://127.0.0.1:8080/releases/f.tgz", file),
            Ok(FeatureSource::Tarball(_))
        ));
        for refused in [
            "node",
            "../../../etc",
            "http://example.com/f.tgz",
            "ghcr.io/o/f;rm:1",
        ] {
            assert!(feature_source(refused, file).is_err(), "{refused}");
        }
    }

    #[test]
    fn options_are_text_and_a_bare_text_is_the_version() {
        let options =
            feature_options(&serde_json::json!({ "version": "18", "pnpm": true, "n": 2 }));
        assert_eq!(
            options.unwrap(),
            BTreeMap::from([
                ("n".to_owned(), "2".to_owned()),
                ("pnpm".to_owned(), "true".to_owned()),
                ("version".to_owned(), "18".to_owned()),
            ])
        );
        assert_eq!(
            feature_options(&serde_json::json!("lts")).unwrap(),
            BTreeMap::from([("version".to_owned(), "lts".to_owned())])
        );
        assert_eq!(feature_options(&serde_json::json!([1])), None);
        assert_eq!(feature_options(&serde_json::json!({ "deep": {} })), None);
    }

    #[test]
    fn install_sh_gets_defaults_then_the_options_given_by_their_variable_names() {
        let metadata = read_feature_metadata(
            r#"{
                // comments are fine
                "id": "hello", "version": "1.2.0",
                "options": {
                    "greeting": { "type": "string", "default": "hey" },
                    "install-extras": { "type": "boolean", "default": false },
                    "2nd.try": { "type": "string" }
                },
                "containerEnv": { "HELLO_HOME": "/opt/hello" },
                "dependsOn": { "ghcr.io/o/f/common:1": {} },
                "installsAfter": ["ghcr.io/o/f/git"],
                "privileged": true,
            }"#,
        )
        .unwrap();
        assert_eq!(metadata.id, "hello");
        assert_eq!(metadata.installs_after, ["ghcr.io/o/f/git"]);
        assert_eq!(metadata.depends_on[0].0, "ghcr.io/o/f/common:1");
        assert_eq!(metadata.notes.len(), 1, "{:?}", metadata.notes);
        let given = BTreeMap::from([("greeting".to_owned(), "it's me".to_owned())]);
        let variables = install_variables(&metadata, &given);
        assert_eq!(
            variables,
            [
                ("GREETING".to_owned(), "it's me".to_owned()),
                ("INSTALL_EXTRAS".to_owned(), "false".to_owned()),
            ]
        );
        assert_eq!(
            install_variables_file(&variables),
            "GREETING='it'\\''s me'\nINSTALL_EXTRAS='false'\n"
        );
        assert_eq!(option_variable("2nd.try"), "_ND_TRY");
        assert!(read_feature_metadata("{ \"version\": \"1\" }").is_err());
        assert!(read_feature_metadata("{ broken").is_err());
    }

    fn to_order(identity: &str, depends_on: &[&str], installs_after: &[&str]) -> FeatureToOrder {
        FeatureToOrder {
            identity: identity.to_owned(),
            depends_on: depends_on.iter().map(|s| (*s).to_owned()).collect(),
            installs_after: installs_after.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn features_install_after_what_they_need_and_the_owners_order_comes_first() {
        let features = [
            to_order("r/node", &["r/common"], &[]),
            to_order("r/python", &[], &["r/absent", "r/node"]),
            to_order("r/common", &[], &[]),
            to_order("r/go", &[], &[]),
        ];
        assert_eq!(install_order(&features, &[]).unwrap(), [2, 0, 1, 3]);
        assert_eq!(
            install_order(&features, &["r/go".to_owned()]).unwrap(),
            [3, 2, 0, 1]
        );
        let cycle = [
            to_order("r/a", &["r/b"], &[]),
            to_order("r/b", &[], &["r/a"]),
        ];
        let error = install_order(&cycle, &[]).unwrap_err();
        assert!(error.contains("r/a, r/b"), "{error}");
    }
}
