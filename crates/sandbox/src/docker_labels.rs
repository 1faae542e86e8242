//! The labels Handoff puts on what it makes in the Docker engine (containers, networks,
//! volumes, images), so that it finds its own things again and removes only those.

/// The label every Handoff container carries, with the run's id as value.
pub const RUN_LABEL: &str = "dev.handoff.run";
/// The label naming the installation (data folder) a container belongs to.
pub const INSTALLATION_LABEL: &str = "dev.handoff.installation";
/// The label of a feedback item's kept working copy (a volume), with the item's id.
pub const KEPT_COPY_LABEL: &str = "dev.handoff.kept-copy";
/// The label of a gate and of its network, with the repository's id.
pub const GATE_LABEL: &str = "dev.handoff.gate";
/// The label naming the user (`uid:gid`) the image runs its agent as; a Docker sandbox
/// hands the workspace to that user.
pub const AGENT_USER_LABEL: &str = "dev.handoff.agent-user";
