//! A dev container's features made ready for the agent layer: each fetched from where
//! it is published ([`crate::feature_registry`]) or taken from the repository, the
//! features they depend on fetched too, read (`devcontainer-feature.json`) and put in
//! their install order, with the variables each `install.sh` runs with.
//!
//! The layer installs them as root after Handoff's own part, so the agent's user is
//! there for a feature to set up (`_REMOTE_USER`); see [`crate::environment_layer`].

use std::collections::BTreeMap;
use std::io::Read as _;

use handoff_domain::dev_container_feature::{
    feature_source, install_order, install_variables, read_feature_metadata, FeatureMetadata,
    FeatureRequest, FeatureSource, FeatureToOrder,
};

use crate::environment_image::EnvironmentBuildError;
use crate::environment_layer::FeatureInstall;
use crate::feature_registry::{feature_client, fetch_from_registry, fetch_tarball};
use crate::tar_transfer::append_file;
use handoff_domain::dev_container_feature::install_variables_file;

/// The most features one environment installs, those they depend on included.
const MOST_FEATURES: usize = 32;

/// What a dev container asks for, as the build fetches it.
#[derive(Debug, Clone, Default)]
pub struct FeaturesToFetch {
    pub requests: Vec<FeatureRequest>,
    /// The files of each local feature (by its path from the repository's root), as a
    /// tar archive of its folder's contents.
    pub local_files: BTreeMap<String, Vec<u8>>,
    /// The identities of the features `overrideFeatureInstallOrder` puts first.
    pub first: Vec<String>,
}

/// A feature ready to install.
#[derive(Debug, Clone)]
pub struct FetchedFeature {
    /// As the dev container (or the feature that depends on it) wrote it.
    pub reference: String,
    pub metadata: FeatureMetadata,
    /// Its files (`devcontainer-feature.json`, `install.sh`, …), a tar archive.
    pub files: Vec<u8>,
    /// The variables `install.sh` runs with: its options.
    pub variables: Vec<(String, String)>,
}

impl FetchedFeature {
    /// What a failure of its install is called.
    pub fn step_name(&self) -> String {
        format!("the feature {}", self.reference)
    }
}

/// The features as the layer installs them, in their order: each in a folder of its
/// own under `features/` in the build's context.
pub fn feature_installs(features: &[FetchedFeature]) -> Vec<FeatureInstall> {
    features
        .iter()
        .enumerate()
        .map(|(index, feature)| FeatureInstall {
            folder: feature_folder(index, feature),
            name: feature.step_name(),
            container_env: feature
                .metadata
                .container_env
                .iter()
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
        })
        .collect()
}

/// Each feature's files under its folder in `archive`, with `handoff-feature.env`
/// (its options) beside them.
pub fn append_feature_files(
    archive: &mut tar::Builder<Vec<u8>>,
    features: &[FetchedFeature],
) -> Result<(), EnvironmentBuildError> {
    let pack = |error: std::io::Error| EnvironmentBuildError::Pack(error.to_string());
    for (index, feature) in features.iter().enumerate() {
        let folder = feature_folder(index, feature);
        let mut entries = tar::Archive::new(feature.files.as_slice());
        for entry in entries.entries().map_err(pack)? {
            let mut entry = entry.map_err(pack)?;
            let kind = entry.header().entry_type();
            if !(kind.is_file() || kind.is_dir() || kind.is_symlink()) {
                continue;
            }
            let path = entry.path().map_err(pack)?.to_string_lossy().into_owned();
            let path = path.trim_start_matches("./");
            if path.is_empty() || path.split('/').any(|part| part == "..") {
                continue;
            }
            let mut header = entry.header().clone();
            archive
                .append_data(&mut header, format!("{folder}/{path}"), &mut entry)
                .map_err(pack)?;
        }
        append_file(
            archive,
            &format!("{folder}/handoff-feature.env"),
            install_variables_file(&feature.variables).as_bytes(),
            0o644,
        )
        .map_err(pack)?;
    }
    Ok(())
}

/// `features/N-id`: the N-th feature's folder, named by its id for the log.
fn feature_folder(index: usize, feature: &FetchedFeature) -> String {
    let id: String = feature
        .metadata
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("features/{}-{id}", index + 1)
}

/// Every feature `wanted` asks for and those they depend on, in their install order.
/// A feature that cannot be fetched or read fails the build, named by its reference.
pub async fn fetch_features(
    wanted: &FeaturesToFetch,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<Vec<FetchedFeature>, EnvironmentBuildError> {
    if wanted.requests.is_empty() {
        return Ok(Vec::new());
    }
    let http = feature_client().map_err(EnvironmentBuildError::Pack)?;
    let mut queue: Vec<FeatureRequest> = wanted.requests.clone();
    let mut fetched: Vec<(FeatureSource, FetchedFeature)> = Vec::new();
    while let Some(request) = queue.first().cloned() {
        queue.remove(0);
        let failed = |detail: String| EnvironmentBuildError::Step {
            step: format!("the feature {}", request.reference),
            detail,
        };
        if fetched.len() >= MOST_FEATURES {
            return Err(failed(format!(
                "more than {MOST_FEATURES} features, counting those they depend on"
            )));
        }
        progress(&format!("fetching the feature {}", request.reference));
        let files = match &request.source {
            FeatureSource::Registry(reference) => fetch_from_registry(&http, reference).await,
            FeatureSource::Tarball(address) => fetch_tarball(&http, address).await,
            FeatureSource::Local(path) => wanted
                .local_files
                .get(path)
                .cloned()
                .ok_or_else(|| format!("{path} was not read from the base branch")),
        }
        .map_err(|detail| failed(with_what_to_do(&request.source, detail)))?;
        let metadata = feature_metadata(&files).map_err(failed)?;
        progress(&format!(
            "the feature {} is {} {}",
            request.reference, metadata.id, metadata.version
        ));
        for note in &metadata.notes {
            progress(&format!("note: {note}"));
        }
        for (reference, options) in &metadata.depends_on {
            let source = feature_source(reference, "")
                .map_err(|reason| failed(format!("it depends on {reference}: {reason}")))?;
            let known = |other: &FeatureSource| other.identity() == source.identity();
            if !fetched.iter().any(|(other, _)| known(other))
                && !queue.iter().any(|other| known(&other.source))
                && source.identity() != request.source.identity()
            {
                queue.push(FeatureRequest {
                    reference: reference.clone(),
                    source,
                    options: options.clone(),
                });
            }
        }
        let variables = install_variables(&metadata, &request.options);
        fetched.push((
            request.source.clone(),
            FetchedFeature {
                reference: request.reference.clone(),
                metadata,
                files,
                variables,
            },
        ));
    }
    ordered(fetched, &wanted.first)
}

/// `fetched` in its install order.
fn ordered(
    fetched: Vec<(FeatureSource, FetchedFeature)>,
    first: &[String],
) -> Result<Vec<FetchedFeature>, EnvironmentBuildError> {
    let to_order: Vec<FeatureToOrder> = fetched
        .iter()
        .map(|(source, feature)| FeatureToOrder {
            identity: source.identity(),
            depends_on: feature
                .metadata
                .depends_on
                .iter()
                .filter_map(|(reference, _)| feature_source(reference, "").ok())
                .map(|source| source.identity())
                .collect(),
            installs_after: feature.metadata.installs_after.clone(),
        })
        .collect();
    let order = install_order(&to_order, first).map_err(|detail| EnvironmentBuildError::Step {
        step: "the features' install order".to_owned(),
        detail,
    })?;
    let mut slots: Vec<Option<FetchedFeature>> = fetched
        .into_iter()
        .map(|(_, feature)| Some(feature))
        .collect();
    Ok(order
        .into_iter()
        .filter_map(|index| slots[index].take())
        .collect())
}

/// A fetch's failure with what the owner can do about it.
fn with_what_to_do(source: &FeatureSource, detail: String) -> String {
    match source {
        FeatureSource::Registry(_) | FeatureSource::Tarball(_) if detail.contains("cannot be reached") => format!(
            "{detail}; Handoff fetches a dev container's features from where they are published: let this machine reach it, or install what the feature adds in the dev container's Dockerfile instead"
        ),
        _ => detail,
    }
}

/// What the feature's `devcontainer-feature.json` says; it must have an `install.sh`.
fn feature_metadata(files: &[u8]) -> Result<FeatureMetadata, String> {
    let mut text = None;
    let mut has_install = false;
    let unreadable = |error: std::io::Error| format!("its files are not a tar archive: {error}");
    let mut archive = tar::Archive::new(files);
    for entry in archive.entries().map_err(unreadable)? {
        let mut entry = entry.map_err(unreadable)?;
        let path = entry
            .path()
            .map_err(unreadable)?
            .to_string_lossy()
            .into_owned();
        match path.trim_start_matches("./") {
            "devcontainer-feature.json" => {
                let mut read = String::new();
                entry.read_to_string(&mut read).map_err(|error| {
                    format!("its devcontainer-feature.json is not text: {error}")
                })?;
                text = Some(read);
            }
            "install.sh" => has_install = true,
            _ => {}
        }
    }
    let text = text.ok_or("it has no devcontainer-feature.json")?;
    if !has_install {
        return Err("it has no install.sh".to_owned());
    }
    read_feature_metadata(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feature_files(json: &str, with_install: bool) -> Vec<u8> {
        let mut archive = tar::Builder::new(Vec::new());
        append_file(
            &mut archive,
            "./devcontainer-feature.json",
            json.as_bytes(),
            0o644,
        )
        .unwrap();
        if with_install {
            append_file(&mut archive, "./install.sh", b"#!/bin/sh\n", 0o755).unwrap();
        }
        archive.into_inner().unwrap()
    }

    fn local(path: &str) -> FeatureRequest {
        FeatureRequest {
            reference: format!("./{path}"),
            source: FeatureSource::Local(format!(".devcontainer/{path}")),
            options: BTreeMap::from([("greeting".to_owned(), "hi".to_owned())]),
        }
    }

    #[tokio::test]
    async fn local_features_are_read_with_their_options_in_the_order_asked() {
        let wanted = FeaturesToFetch {
            requests: vec![local("late"), local("early")],
            local_files: BTreeMap::from([
                (
                    ".devcontainer/late".to_owned(),
                    feature_files(r#"{ "id": "late", "version": "1.0.0" }"#, true),
                ),
                (
                    ".devcontainer/early".to_owned(),
                    feature_files(r#"{ "id": "early", "version": "2.0.0" }"#, true),
                ),
            ]),
            first: Vec::new(),
        };
        let mut lines = Vec::new();
        let features = fetch_features(&wanted, &mut |line: &str| lines.push(line.to_owned()))
            .await
            .unwrap();
        let ids: Vec<&str> = features.iter().map(|f| f.metadata.id.as_str()).collect();
        assert_eq!(ids, ["late", "early"]);
        assert!(
            lines
                .iter()
                .any(|line| line == "the feature ./early is early 2.0.0"),
            "{lines:?}"
        );
        assert_eq!(
            features[0].variables,
            [("GREETING".to_owned(), "hi".to_owned())]
        );
    }

    #[tokio::test]
    async fn a_feature_without_its_install_script_fails_the_build_by_name() {
        let wanted = FeaturesToFetch {
            requests: vec![local("broken")],
            local_files: BTreeMap::from([(
                ".devcontainer/broken".to_owned(),
                feature_files(r#"{ "id": "broken", "version": "1" }"#, false),
            )]),
            first: Vec::new(),
        };
        let error = fetch_features(&wanted, &mut |_: &str| {})
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the feature ./broken failed: it has no install.sh"
        );
    }

    #[tokio::test]
    async fn an_unreachable_registry_is_named_with_what_to_do() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let reference = format!("localhost:{port}/features/hello:1");
        let wanted = FeaturesToFetch {
            requests: vec![FeatureRequest {
                source: feature_source(&reference, "").unwrap(),
                reference: reference.clone(),
                options: BTreeMap::new(),
            }],
            ..FeaturesToFetch::default()
        };
        let error = fetch_features(&wanted, &mut |_: &str| {})
            .await
            .unwrap_err();
        let EnvironmentBuildError::Step { step, detail } = error else {
            panic!("a failed step");
        };
        assert_eq!(step, format!("the feature {reference}"));
        assert!(
            detail.starts_with(&format!("localhost:{port} cannot be reached")),
            "{detail}"
        );
        assert!(detail.contains("let this machine reach it"), "{detail}");
    }
}
