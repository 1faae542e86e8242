//! Everything the egress gate holds while it runs (its rules, the keys it forwards for,
//! how busy it is) and how it carries out one command of its control socket. The gate's
//! program and a run's key link both work on it.

use std::sync::Arc;
use std::time::Duration;

use super::gate_control::{policy_of, GateAnswer, GateCommand, MeterReport};
use super::proxy::{EgressRules, SharedRules};
use super::GateActivity;
use crate::key_forwarding::ForwardingTable;

/// Everything the gate holds while it runs.
#[derive(Debug, Clone, Default)]
pub struct GateState {
    pub rules: SharedRules,
    pub keys: Arc<ForwardingTable>,
    pub activity: GateActivity,
}

impl GateState {
    /// Carries out one command.
    pub fn apply(&self, command: GateCommand) -> GateAnswer {
        self.activity.touch();
        match command {
            GateCommand::SetRules {
                mode,
                allowed,
                this_machine,
            } => match policy_of(&mode, &allowed) {
                Ok(policy) => {
                    tracing::info!(
                        mode = %policy.mode,
                        entries = policy.allowed.len(),
                        "egress: rules set"
                    );
                    *self
                        .rules
                        .write()
                        .unwrap_or_else(|poisoned| poisoned.into_inner()) = EgressRules {
                        policy,
                        this_machine,
                    };
                    GateAnswer::done()
                }
                Err(refusal) => GateAnswer::failed(refusal),
            },
            GateCommand::HoldKey { .. } => GateAnswer::failed(
                "a key is held only on a connection of its own (`handoff-egress hold-key`)",
            ),
            GateCommand::AddKey { key } => {
                tracing::info!(host = %key.api_host, "egress: forwarding for a run");
                let until = std::time::Instant::now()
                    .checked_add(Duration::from_secs(key.valid_for_seconds));
                self.keys.add_until(key.into_forwarded(None), until);
                GateAnswer::done()
            }
            GateCommand::RemoveKey { placeholder } => {
                let mut answer = GateAnswer::done();
                if let Some(key) = self.keys.remove(&placeholder) {
                    tracing::info!("egress: a run's key given back");
                    answer.meter = Some(MeterReport {
                        steps: key.meter.steps(),
                        refused_calls: key.meter.spend().refused_calls,
                    });
                }
                answer
            }
        }
    }
}
