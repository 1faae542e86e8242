//! The network an environment's image is built on: the same one the repository's runs
//! get. With no network, none; otherwise the repository's internal network, whose only
//! way out is its egress gate (told the same rules as a run, so that a build and a run
//! side by side agree), reached through the gate's proxy, which the build's steps are
//! given as Docker's predefined proxy arguments (kept out of the image's history). A
//! step that reaches for a host off the repository's allow-list is refused by the gate,
//! like a run's. The build gets no key: the gate holds none for it.

use std::collections::HashMap;

use bollard::query_parameters::BuildImageOptions;

/// Where an image's build steps run, and how they reach out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildNetwork {
    /// The engine's network mode for the steps (`none`, or a network's name); the
    /// engine's default network when none is named.
    pub mode: Option<String>,
    /// The proxy variables the steps are given (`HTTPS_PROXY`, …).
    pub proxy_arguments: HashMap<String, String>,
    /// What it is, in words for the build's log.
    pub words: String,
}

impl BuildNetwork {
    /// No way out at all.
    pub fn none() -> Self {
        BuildNetwork {
            mode: Some("none".to_owned()),
            proxy_arguments: HashMap::new(),
            words: "no network, as the repository's runs".to_owned(),
        }
    }

    /// The gate's `network`, reached through its `proxy`; `no_proxy` is reached directly.
    pub fn behind_gate(network: &str, proxy: &str, no_proxy: &str, words: String) -> Self {
        let mut proxy_arguments = HashMap::new();
        for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
            proxy_arguments.insert(name.to_owned(), proxy.to_owned());
        }
        for name in ["NO_PROXY", "no_proxy"] {
            proxy_arguments.insert(name.to_owned(), no_proxy.to_owned());
        }
        BuildNetwork {
            mode: Some(network.to_owned()),
            proxy_arguments,
            words,
        }
    }

    /// `options` with this network: its mode, and the proxy arguments beside the
    /// build's own (which never name a proxy variable of their own over these).
    pub fn applied_to(&self, mut options: BuildImageOptions) -> BuildImageOptions {
        if let Some(mode) = &self.mode {
            options.networkmode = Some(mode.clone());
        }
        if !self.proxy_arguments.is_empty() {
            options
                .buildargs
                .get_or_insert_with(HashMap::new)
                .extend(self.proxy_arguments.clone());
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::query_parameters::BuildImageOptionsBuilder;

    #[test]
    fn behind_the_gate_the_steps_get_its_network_and_its_proxy_over_the_builds_own() {
        let own = HashMap::from([("HTTPS_PROXY", "http://elsewhere:3128"), ("NODE", "20")]);
        let options = BuildImageOptionsBuilder::default().buildargs(&own).build();
        let network = BuildNetwork::behind_gate(
            "handoff-gate-net",
            "http://handoff-gate:3128",
            "handoff-gate",
            "the allow-list".to_owned(),
        );
        let applied = network.applied_to(options);
        assert_eq!(applied.networkmode.as_deref(), Some("handoff-gate-net"));
        let arguments = applied.buildargs.unwrap();
        assert_eq!(arguments["HTTPS_PROXY"], "http://handoff-gate:3128");
        assert_eq!(arguments["http_proxy"], "http://handoff-gate:3128");
        assert_eq!(arguments["NO_PROXY"], "handoff-gate");
        assert_eq!(arguments["NODE"], "20");
    }

    #[test]
    fn with_no_network_the_steps_get_none_and_the_engines_default_is_left_alone() {
        let none = BuildNetwork::none().applied_to(BuildImageOptions::default());
        assert_eq!(none.networkmode.as_deref(), Some("none"));
        assert!(none.buildargs.is_none());
        let default = BuildNetwork::default().applied_to(BuildImageOptions::default());
        assert!(default.networkmode.is_none());
    }
}
