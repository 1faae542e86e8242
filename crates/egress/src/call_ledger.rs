//! Where a run's meter reserves each model call and settles it: the spend ledger that
//! every run and every process of the installation share (the database, through the
//! pipeline), or, in a repository's egress gate, the link back to the Handoff that
//! handed the gate the run's key.

use futures::future::BoxFuture;

use handoff_domain::agent_step::AgentStep;
use handoff_domain::call_reservation::{CallAsk, CallCharge, CallRefusal};

/// A reservation's place in the ledger.
pub type LedgerEntry = i64;

/// Why the ledger did not let a call through.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum LedgerRefusal {
    /// A budget cannot hold the call.
    #[error(transparent)]
    Budget(#[from] CallRefusal),
    /// The ledger could not be reached or written: no call leaves unaccounted.
    #[error("the spend ledger cannot be written: {0}")]
    Unavailable(String),
}

/// A ledger of calls: reserve before a call leaves, settle once its answer is read.
pub trait CallLedger: Send + Sync + std::fmt::Debug {
    /// Reserves `ask` against every budget, or says why not.
    fn reserve(&self, ask: CallAsk) -> BoxFuture<'static, Result<LedgerEntry, LedgerRefusal>>;

    /// Settles the reservation `entry` with what its call is charged; `step` is the call
    /// as the meter read it.
    fn settle(
        &self,
        entry: LedgerEntry,
        charge: CallCharge,
        step: AgentStep,
    ) -> BoxFuture<'static, ()>;
}
