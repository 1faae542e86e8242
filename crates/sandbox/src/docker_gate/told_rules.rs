//! The rules a gate was last told, remembered on this machine so that a run whose rules
//! are the same does not tell them again (each telling runs a program in the gate, a
//! round trip through the engine on every run's path).
//!
//! What is remembered is the gate's container, when its program last started, and a
//! hash of the rules: a gate made anew or started again (its program forgets its rules
//! when it stops) is told them again. Telling and remembering happen under one lock file
//! per gate, so that no process remembers rules another process has since replaced.

use std::path::PathBuf;

use sha2::{Digest as _, Sha256};

use super::{gate_files_folder, unavailable, EgressGate};
use crate::SandboxError;
use handoff_egress::gate_control::GateCommand;

/// What remembers the rules of the gate `name`, and the lock held while they are told.
fn told_rules_paths(name: &str) -> (PathBuf, PathBuf) {
    let folder = gate_files_folder();
    (
        folder.join(format!("{name}.rules")),
        folder.join(format!("{name}.rules.lock")),
    )
}

/// The line remembered for `rules` told to the gate `id` whose program started at
/// `started_at`.
fn told_rules_line(id: &str, started_at: &str, rules: &GateCommand) -> String {
    let hash = Sha256::digest(serde_json::to_vec(rules).unwrap_or_default());
    let hash: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{id} {started_at} {hash}")
}

impl EgressGate {
    /// Tells the gate `rules` (a `SetRules` command) unless this machine told it exactly
    /// these since its program last started.
    pub async fn tell_rules(&self, rules: GateCommand) -> Result<(), SandboxError> {
        let Some(started_at) = self.started_at.as_deref() else {
            // A gate started or made just now: its program has no rules yet.
            self.configure(&[rules]).await?;
            return Ok(());
        };
        let (remembered, lock_path) = told_rules_paths(&self.name);
        let _one_telling_at_a_time = handoff_store::file_lock::FileLock::take(&lock_path)
            .await
            .map_err(|error| {
                unavailable(format!(
                    "cannot take the egress gate's lock {}: {error}",
                    lock_path.display()
                ))
            })?;
        let line = told_rules_line(&self.id, started_at, &rules);
        match std::fs::read_to_string(&remembered) {
            Ok(told) if told == line => return Ok(()),
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::debug!(file = %remembered.display(), %error, "the gate's last rules cannot be read; they are told again");
            }
        }
        // Forgotten first: should telling fail half-way, nothing claims the gate has them.
        if let Err(error) = std::fs::remove_file(&remembered) {
            if error.kind() != std::io::ErrorKind::NotFound {
                return Err(unavailable(format!(
                    "cannot forget the egress gate's last rules in {}: {error}",
                    remembered.display()
                )));
            }
        }
        self.configure(&[rules]).await?;
        if let Err(error) = std::fs::write(&remembered, line) {
            tracing::debug!(file = %remembered.display(), %error, "the gate's rules cannot be remembered; the next run tells them again");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_domain::{NetworkMode, NetworkPolicy};
    use handoff_egress::gate_control::set_rules;

    fn rules(mode: NetworkMode) -> GateCommand {
        set_rules(
            &NetworkPolicy {
                mode,
                ..NetworkPolicy::default()
            },
            Vec::new(),
        )
    }

    #[test]
    fn other_rules_a_gate_made_anew_or_started_again_are_told_again() {
        let told = told_rules_line(
            "gate-a",
            "2026-12-05T10:00:00.1Z",
            &rules(NetworkMode::Allowlist),
        );
        assert_eq!(
            told,
            told_rules_line(
                "gate-a",
                "2026-12-05T10:00:00.1Z",
                &rules(NetworkMode::Allowlist)
            )
        );
        for other in [
            told_rules_line(
                "gate-a",
                "2026-12-05T10:00:00.1Z",
                &rules(NetworkMode::Open),
            ),
            told_rules_line(
                "gate-b",
                "2026-12-05T10:00:00.1Z",
                &rules(NetworkMode::Allowlist),
            ),
            told_rules_line(
                "gate-a",
                "2026-12-05T10:30:00.1Z",
                &rules(NetworkMode::Allowlist),
            ),
        ] {
            assert_ne!(told, other);
        }
    }
}
