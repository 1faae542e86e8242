//! One model call's claim on the budgets before it leaves: its worst case (the input the
//! request holds and the most output it may ask for, at its model's price), checked
//! against what its run, its repository's month and the day have charged already, and
//! what it is charged once its answer has been read.
//!
//! A call goes while every budget has something left, counting the calls under way at
//! their worst case; once one is spent, the next call is refused before it leaves. So
//! calls at once and runs at once together pass a budget by at most the worst case of
//! the last call let through (an answer whose usage cannot be read is charged its whole
//! reservation; one that can is charged what it reported).

use serde::{Deserialize, Serialize};

use super::budgets::{dollars, SpendLimit};

/// A call's worst case, as it asks to be let through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallAsk {
    /// The model the request names (`unknown` when it names none).
    pub model: String,
    /// Dollars at most: the input and the most output at the model's price (at the
    /// table's dearest price when the model has none).
    pub usd: f64,
    /// Tokens at most: the input counted from the request and the most output.
    pub tokens: u64,
    /// Whether the model has no price (so `usd` is at the dearest price).
    pub unpriced: bool,
}

/// What a call is charged once its answer has been read (or could not be).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CallCharge {
    /// Dollars: at the model's price, or at the dearest when it has none.
    pub usd: f64,
    pub tokens: u64,
    /// Whether the answer's usage could not be read: the whole reservation is charged.
    pub unread: bool,
}

impl CallCharge {
    /// The charge of a call whose answer could not be read: all it reserved.
    pub fn whole(ask: &CallAsk) -> CallCharge {
        CallCharge {
            usd: ask.usd,
            tokens: ask.tokens,
            unread: true,
        }
    }
}

/// What the budgets of one call's run stand at: charged and reserved so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Committed {
    pub run_usd: f64,
    pub run_tokens: u64,
    pub repo_month_usd: f64,
    pub day_usd: f64,
    /// What the month's runs paid with the owner's Claude plan hold, on every repository.
    pub plan_month_usd: f64,
}

/// The budgets one call is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct CallBudgets {
    pub run: SpendLimit,
    /// The repository's name, for the refusal's words.
    pub repo: String,
    pub repo_month_usd: Option<f64>,
    pub day_usd: Option<f64>,
    /// For a run paid with the owner's Claude plan: the plan's monthly credit, when the
    /// owner has calls stop there.
    pub plan_credit: Option<PlanBudget>,
}

/// A Claude plan's monthly credit as a budget.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanBudget {
    /// "Claude Max 5x", for the refusal's words.
    pub plan: String,
    pub usd: f64,
}

impl PlanBudget {
    /// The refusal once the plan's runs have drawn `drawn_usd` of the credit, if that is
    /// all of it.
    pub fn reached(&self, drawn_usd: f64) -> Option<CallRefusal> {
        (drawn_usd + ROUNDING_USD >= self.usd).then(|| CallRefusal::PlanCreditSpent {
            plan: self.plan.clone(),
            budget: self.usd,
            committed: drawn_usd,
            ask_usd: 0.0,
            model: None,
        })
    }
}

/// Why a call was not let through: a budget could not hold its worst case.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum CallRefusal {
    #[error(
        "this run's budget ({limit}) is spent: {} and {tokens} tokens charged or held by \
         its calls{}",
        dollars(*charged_usd),
        unpriced_words(model.as_deref())
    )]
    RunSpent {
        limit: String,
        charged_usd: f64,
        tokens: u64,
        ask_usd: f64,
        ask_tokens: u64,
        /// The model, when it has no price (so the call is counted at the dearest).
        #[serde(default)]
        model: Option<String>,
    },
    #[error(
        "{repo}'s monthly budget ({}) is spent: {} charged or held by its runs this \
         month{}",
        dollars(*budget),
        dollars(*committed),
        unpriced_words(model.as_deref())
    )]
    MonthSpent {
        repo: String,
        budget: f64,
        committed: f64,
        ask_usd: f64,
        #[serde(default)]
        model: Option<String>,
    },
    #[error(
        "Handoff's daily budget ({}) is spent: {} charged or held today (UTC){}",
        dollars(*budget),
        dollars(*committed),
        unpriced_words(model.as_deref())
    )]
    DaySpent {
        budget: f64,
        committed: f64,
        ask_usd: f64,
        #[serde(default)]
        model: Option<String>,
    },
    #[error(
        "the {plan} plan's monthly credit ({}) is spent: {} charged or held this month \
         (UTC) by the runs it paid for, at API prices{}",
        dollars(*budget),
        dollars(*committed),
        unpriced_words(model.as_deref())
    )]
    PlanCreditSpent {
        plan: String,
        budget: f64,
        committed: f64,
        ask_usd: f64,
        #[serde(default)]
        model: Option<String>,
    },
}

impl CallRefusal {
    /// The budget as reached, rather than as refusing a call: "this run's budget ($1.00)
    /// is spent: $1.20 and 400000 tokens charged".
    pub fn as_reached(&self) -> String {
        match self {
            CallRefusal::RunSpent {
                limit,
                charged_usd,
                tokens,
                ..
            } => format!(
                "this run's budget ({limit}) is spent: {} and {tokens} tokens charged",
                dollars(*charged_usd)
            ),
            CallRefusal::MonthSpent {
                repo,
                budget,
                committed,
                ..
            } => format!(
                "{repo}'s monthly budget ({}) is spent: {} charged this month",
                dollars(*budget),
                dollars(*committed)
            ),
            CallRefusal::DaySpent {
                budget, committed, ..
            } => format!(
                "Handoff's daily budget ({}) is spent: {} charged today (UTC)",
                dollars(*budget),
                dollars(*committed)
            ),
            CallRefusal::PlanCreditSpent {
                plan,
                budget,
                committed,
                ..
            } => format!(
                "the {plan} plan's monthly credit ({}) is spent: {} charged this month (UTC)",
                dollars(*budget),
                dollars(*committed)
            ),
        }
    }
}

/// What a refusal adds when the call's model has no price.
fn unpriced_words(unpriced_model: Option<&str>) -> String {
    match unpriced_model {
        Some(model) => format!(
            "; {model} has no price, so its calls count at the dearest price in the table: \
             give it its price in Handoff's spend settings"
        ),
        None => String::new(),
    }
}

/// A margin for the sums of floating dollars: a call that fits to the last fraction of
/// a cent is not refused for rounding.
const ROUNDING_USD: f64 = 1e-9;

impl CallBudgets {
    /// Lets `ask` through while every budget still has something left with `committed`
    /// counted; the refusal names the first that has none.
    pub fn check(&self, ask: &CallAsk, committed: Committed) -> Result<(), CallRefusal> {
        let unpriced = ask.unpriced.then(|| ask.model.clone());
        match self.reached(committed) {
            None => Ok(()),
            Some(mut refusal) => {
                match &mut refusal {
                    CallRefusal::RunSpent {
                        ask_usd,
                        ask_tokens,
                        model,
                        ..
                    } => {
                        (*ask_usd, *ask_tokens, *model) = (ask.usd, ask.tokens, unpriced);
                    }
                    CallRefusal::MonthSpent { ask_usd, model, .. }
                    | CallRefusal::DaySpent { ask_usd, model, .. }
                    | CallRefusal::PlanCreditSpent { ask_usd, model, .. } => {
                        (*ask_usd, *model) = (ask.usd, unpriced);
                    }
                }
                Err(refusal)
            }
        }
    }
}

impl CallBudgets {
    /// The first budget that `committed` has reached, if any: the refusal any further
    /// call would get.
    pub fn reached(&self, committed: Committed) -> Option<CallRefusal> {
        let reached = |budget: Option<f64>, charged: f64| {
            budget.is_some_and(|budget| charged + ROUNDING_USD >= budget)
        };
        let run_tokens = self
            .run
            .tokens
            .is_some_and(|tokens| committed.run_tokens >= tokens);
        if reached(self.run.usd, committed.run_usd) || run_tokens {
            return Some(CallRefusal::RunSpent {
                limit: self.run.describe(),
                charged_usd: committed.run_usd,
                tokens: committed.run_tokens,
                ask_usd: 0.0,
                ask_tokens: 0,
                model: None,
            });
        }
        if reached(self.repo_month_usd, committed.repo_month_usd) {
            return Some(CallRefusal::MonthSpent {
                repo: self.repo.clone(),
                budget: self.repo_month_usd.unwrap_or_default(),
                committed: committed.repo_month_usd,
                ask_usd: 0.0,
                model: None,
            });
        }
        if reached(self.day_usd, committed.day_usd) {
            return Some(CallRefusal::DaySpent {
                budget: self.day_usd.unwrap_or_default(),
                committed: committed.day_usd,
                ask_usd: 0.0,
                model: None,
            });
        }
        self.plan_credit
            .as_ref()
            .and_then(|credit| credit.reached(committed.plan_month_usd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets() -> CallBudgets {
        CallBudgets {
            run: SpendLimit {
                usd: Some(1.0),
                tokens: Some(100_000),
            },
            repo: "octo/app".to_owned(),
            repo_month_usd: Some(10.0),
            day_usd: Some(20.0),
            plan_credit: None,
        }
    }

    #[test]
    fn a_run_paid_with_the_plan_stops_once_the_months_credit_is_drawn() {
        let on_the_plan = CallBudgets {
            plan_credit: Some(PlanBudget {
                plan: "Claude Pro".to_owned(),
                usd: 20.0,
            }),
            repo_month_usd: None,
            day_usd: None,
            ..budgets()
        };
        let below = Committed {
            plan_month_usd: 19.5,
            ..Committed::default()
        };
        assert_eq!(on_the_plan.check(&ask(0.9, 1_000), below), Ok(()));
        let drawn = Committed {
            plan_month_usd: 20.0,
            ..Committed::default()
        };
        let refusal = on_the_plan.check(&ask(0.9, 1_000), drawn).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "the Claude Pro plan's monthly credit ($20.00) is spent: $20.00 charged or held \
             this month (UTC) by the runs it paid for, at API prices"
        );
        // A run paid with an API key is not held to the plan's credit.
        assert_eq!(budgets().check(&ask(0.9, 1_000), drawn), Ok(()));
    }

    fn ask(usd: f64, tokens: u64) -> CallAsk {
        CallAsk {
            model: "claude-sonnet-4-5".to_owned(),
            usd,
            tokens,
            unpriced: false,
        }
    }

    #[test]
    fn a_call_goes_while_every_budget_has_something_left() {
        let committed = Committed {
            run_usd: 0.9,
            run_tokens: 50_000,
            repo_month_usd: 9.9,
            day_usd: 19.9,
            plan_month_usd: 0.0,
        };
        // Its worst case takes each past: the last call let through may.
        assert_eq!(budgets().check(&ask(0.3, 60_000), committed), Ok(()));
    }

    #[test]
    fn a_call_once_the_run_is_spent_is_refused_with_the_figures() {
        let committed = Committed {
            run_usd: 1.2,
            run_tokens: 1_000,
            ..Committed::default()
        };
        let refusal = budgets().check(&ask(0.3, 1_000), committed).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "this run's budget ($1.00 or 100000 tokens) is spent: $1.20 and 1000 tokens \
             charged or held by its calls"
        );
        let tokens = Committed {
            run_tokens: 100_000,
            ..Committed::default()
        };
        assert!(matches!(
            budgets().check(&ask(0.01, 2_000), tokens),
            Err(CallRefusal::RunSpent { .. })
        ));
        let mut unpriced = ask(9.6, 130_000);
        unpriced.unpriced = true;
        unpriced.model = "gpt-6.1-sol".to_owned();
        let refusal = budgets().check(&unpriced, committed).unwrap_err();
        assert!(
            refusal.to_string().contains("gpt-6.1-sol has no price"),
            "{refusal}"
        );
    }

    #[test]
    fn the_month_and_the_day_refuse_once_spent() {
        let month = Committed {
            repo_month_usd: 10.0,
            ..Committed::default()
        };
        assert!(matches!(
            budgets().check(&ask(0.2, 10), month),
            Err(CallRefusal::MonthSpent { .. })
        ));
        let day = Committed {
            day_usd: 20.1,
            ..Committed::default()
        };
        let refusal = budgets().check(&ask(0.2, 10), day).unwrap_err();
        assert!(refusal
            .to_string()
            .starts_with("Handoff's daily budget ($20.00) is spent"));
    }

    #[test]
    fn a_budget_is_reached_once_what_it_charged_comes_to_it() {
        let below = Committed {
            run_usd: 0.99,
            ..Committed::default()
        };
        assert_eq!(budgets().reached(below), None);
        let at = Committed {
            run_usd: 1.0,
            ..Committed::default()
        };
        assert!(matches!(
            budgets().reached(at),
            Some(CallRefusal::RunSpent { .. })
        ));
        let day = Committed {
            day_usd: 20.5,
            ..Committed::default()
        };
        assert!(matches!(
            budgets().reached(day),
            Some(CallRefusal::DaySpent { .. })
        ));
    }

    #[test]
    fn an_unread_answer_is_charged_all_it_reserved() {
        let ask = ask(0.42, 9_000);
        assert_eq!(
            CallCharge::whole(&ask),
            CallCharge {
                usd: 0.42,
                tokens: 9_000,
                unread: true
            }
        );
    }
}
