//! The run queue's slots in the window: how many runs go at once on this installation
//! (its default follows the machine's cores), and how many each backend may take, as
//! the owner sets them. A repository's own slots are among its settings.

use serde::{Deserialize, Serialize};

use super::invalid_input;
use super::AppCore;
use handoff::domain::run_queue::SlotLimits;
use handoff::error_code::CodedError;
use handoff::store::{parse_slot_count, SettingKey};

/// The slots as they hold now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueueSlotsRecord {
    /// Runs at once on this installation.
    pub installation: u32,
    /// What it is unless set: one per core of this machine, up to four.
    pub installation_default: u32,
    /// Runs at once on each backend (`None`: only the installation's hold it back).
    pub docker: Option<u32>,
    pub e2b: Option<u32>,
    pub local: Option<u32>,
}

/// The slots as typed; empty means the default (the installation) or none of its own
/// (a backend).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueueSlotsInput {
    pub installation: String,
    pub docker: String,
    pub e2b: String,
    pub local: String,
}

pub async fn queue_slots(core: &AppCore) -> Result<QueueSlotsRecord, CodedError> {
    let store = &core.store;
    let limits = store.run_queue().slot_limits().await?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    Ok(QueueSlotsRecord {
        installation: limits.installation,
        installation_default: SlotLimits::for_machine(cores).installation,
        docker: limits.docker,
        e2b: limits.e2b,
        local: limits.local,
    })
}

/// Checks every number first, then saves them all: a bad one changes nothing.
pub async fn set_queue_slots(
    core: &AppCore,
    input: &QueueSlotsInput,
) -> Result<QueueSlotsRecord, CodedError> {
    let store = &core.store;
    let fields = [
        (SettingKey::QueueSlots, "Runs at once", &input.installation),
        (SettingKey::QueueSlotsDocker, "Docker", &input.docker),
        (SettingKey::QueueSlotsE2b, "E2B", &input.e2b),
        (SettingKey::QueueSlotsLocal, "Local", &input.local),
    ];
    let mut checked = Vec::new();
    for (key, label, text) in fields {
        let text = text.trim();
        let value = if text.is_empty() {
            None
        } else {
            parse_slot_count(text, false)
                .map_err(|refusal| invalid_input(format!("{label}: {refusal}")))?
        };
        checked.push((key, value));
    }
    for (key, value) in checked {
        match value {
            Some(slots) => {
                store
                    .settings()
                    .set_setting(key, &slots.to_string())
                    .await?
            }
            None => store.settings().remove_setting(key).await?,
        }
    }
    queue_slots(core).await
}
