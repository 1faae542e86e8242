//! The egress gate: the one way out of a Docker sandbox, and the place the agent's key
//! is added on the way to its provider.
//!
//! The gate is the `handoff-egress` program (`src/bin/handoff-egress.rs`), run in a
//! container of its own beside a repository's sandboxes (see
//! [`crate::docker_gate`]), which the agent can reach only by its ports:
//! - the allow-list proxy ([`proxy`]): `CONNECT` and plain http, names read strictly
//!   ([`request_target`]), addresses judged after resolving
//!   ([`handoff_domain::network_policy`]), TLS handshakes that name another server
//!   closed ([`client_hello`]);
//! - the key forwarder ([`key_forwarding`]) for the runs whose keys Handoff gave it:
//!   each model call read before it leaves ([`model_request`]), reserved in the
//!   installation's ledger ([`call_ledger`]), its answer read as it passes
//!   ([`provider_answer`]) and metered ([`run_meter`]), requests held within a share of
//!   memory ([`request_memory`]), a Claude plan's token only for Claude Code
//!   ([`plan_token_rules`]).
//!
//! Handoff sets the rules and hands over and takes back keys through the gate's
//! control socket ([`gate_control`]), by running `handoff-egress configure` inside the
//! gate's container through the engine, so that keys travel only in memory and the
//! agent cannot send a command. A run's key is held on a connection of its own that
//! stays open for the run ([`key_link`]): each model call is reserved through it in the
//! ledger of the Handoff that runs it, and the key goes when it closes. [`gate`] puts
//! the parts together.

pub mod call_ledger;
pub mod client_hello;
pub mod gate;
pub mod gate_control;
pub mod gate_state;
pub mod http_client;
pub mod key_forwarding;
pub mod key_link;
pub mod model_request;
pub mod plan_token_rules;
pub mod provider_answer;
pub mod proxy;
pub mod request_memory;
pub mod request_target;
pub mod run_meter;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The port the allow-list proxy listens on, inside the gate's container.
pub const PROXY_PORT: u16 = 3128;
/// The port the key forwarder listens on, inside the gate's container.
pub const FORWARDER_PORT: u16 = 3129;

/// How busy the gate is: open connections and when it last did anything, so that an
/// idle gate can stop by itself.
#[derive(Debug, Clone)]
pub struct GateActivity {
    inner: Arc<ActivityInner>,
}

#[derive(Debug)]
struct ActivityInner {
    open: AtomicUsize,
    last: Mutex<Instant>,
}

impl Default for GateActivity {
    fn default() -> Self {
        GateActivity {
            inner: Arc::new(ActivityInner {
                open: AtomicUsize::new(0),
                last: Mutex::new(Instant::now()),
            }),
        }
    }
}

/// A connection being served; the gate is not idle while one exists.
#[derive(Debug)]
pub struct Busy {
    activity: GateActivity,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.activity.inner.open.fetch_sub(1, Ordering::SeqCst);
        self.activity.touch();
    }
}

impl GateActivity {
    /// Marks a connection as open until the guard is dropped.
    pub fn connection_began(&self) -> Busy {
        self.inner.open.fetch_add(1, Ordering::SeqCst);
        self.touch();
        Busy {
            activity: self.clone(),
        }
    }

    /// Marks that something happened now.
    pub fn touch(&self) {
        *self
            .inner
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
    }

    /// How long nothing has happened (zero while a connection is open).
    pub fn idle_for(&self) -> Duration {
        if self.inner.open.load(Ordering::SeqCst) > 0 {
            return Duration::ZERO;
        }
        self.inner
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .elapsed()
    }
}
