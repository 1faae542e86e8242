//! The events the shell sends the page, each named once: what the page listens for, the
//! listener `backend.js` gives it, and the record the event carries (a typedef of
//! `contract.js`). `backend.js` is written from this list and the commands
//! (`tests/it/page_contract_files.rs`), so the names are never typed twice.

/// An event the shell sends the page. The program reads only its name; the rest is read
/// by the test that writes `backend.js`, which includes this file.
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)]
pub struct PageEvent {
    /// The name the shell emits and the page listens for.
    pub name: &'static str,
    /// The listener's name in `backend.js`.
    pub listener: &'static str,
    /// What the event carries: a typedef of `contract.js`, or nothing.
    pub carries: Option<&'static str>,
}

/// What in the mirror changed (the page draws those items, runs and pull requests).
pub const MIRROR_CHANGED: PageEvent = PageEvent {
    name: "mirror-changed",
    listener: "onMirrorChanged",
    carries: Some("MirrorChangesRecord"),
};

/// Whether the page still follows the mirror's changes.
pub const MIRROR_FOLLOWING: PageEvent = PageEvent {
    name: "mirror-following",
    listener: "onMirrorFollowing",
    carries: Some("MirrorFollowing"),
};

/// Handoff was launched again: the window is brought to the front.
pub const SECOND_LAUNCH: PageEvent = PageEvent {
    name: "second-launch",
    listener: "onSecondLaunch",
    carries: None,
};

/// A run event (the page shows it and offers its card).
pub const RUN_EVENT: PageEvent = PageEvent {
    name: "run-event",
    listener: "onRunEvent",
    carries: Some("RunNotice"),
};

/// A notification was clicked: the page opens what it was about.
pub const OPEN_TARGET: PageEvent = PageEvent {
    name: "open-target",
    listener: "onOpenTarget",
    carries: Some("NotificationTarget"),
};

/// Every event, in the order `backend.js` lists them.
#[allow(dead_code)]
pub const PAGE_EVENTS: [PageEvent; 5] = [
    MIRROR_CHANGED,
    MIRROR_FOLLOWING,
    SECOND_LAUNCH,
    RUN_EVENT,
    OPEN_TARGET,
];
