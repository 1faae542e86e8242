//! A run's calls reserved in the installation's spend ledger, in the database: what the
//! run's meter uses wherever its key forwarder stands, so that every run and every
//! process of this machine shares its repository's month and the day.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt as _;

use crate::domain::agent_step::AgentStep;
use crate::domain::call_reservation::{CallAsk, CallCharge};
use crate::sandbox::call_ledger::{CallLedger, LedgerEntry, LedgerRefusal};
use crate::store::spend_ledger::LedgerRun;
use crate::store::Store;

/// One run's side of the spend ledger.
#[derive(Debug)]
pub struct StoreLedger {
    store: Store,
    run: Arc<LedgerRun>,
}

impl StoreLedger {
    pub fn for_run(store: Store, run: LedgerRun) -> Arc<dyn CallLedger> {
        Arc::new(StoreLedger {
            store,
            run: Arc::new(run),
        })
    }
}

impl CallLedger for StoreLedger {
    fn reserve(&self, ask: CallAsk) -> BoxFuture<'static, Result<LedgerEntry, LedgerRefusal>> {
        let store = self.store.clone();
        let run = self.run.clone();
        async move {
            match store.spend().reserve_model_call(&run, &ask, store.now()).await {
                Ok(Ok(entry)) => Ok(entry),
                Ok(Err(refusal)) => Err(LedgerRefusal::Budget(refusal)),
                Err(error) => {
                    tracing::error!(run = %run.run_id, %error, "a model call could not be reserved in the spend ledger");
                    Err(LedgerRefusal::Unavailable(error.to_string()))
                }
            }
        }
        .boxed()
    }

    fn settle(
        &self,
        entry: LedgerEntry,
        charge: CallCharge,
        _step: AgentStep,
    ) -> BoxFuture<'static, ()> {
        let store = self.store.clone();
        let run_id = self.run.run_id;
        async move {
            if let Err(error) = store.spend().settle_model_call(entry, &charge, store.now()).await {
                // The reservation stays held, and is charged whole when the run ends.
                tracing::warn!(run = %run_id, %error, "a model call's settlement could not be written; it counts its whole reservation");
            }
        }
        .boxed()
    }
}
