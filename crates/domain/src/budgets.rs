//! Budgets that stop spending: a run's own (dollars or tokens, $5 unless the owner says
//! otherwise), a repository's per calendar month, and the whole installation's per day.
//!
//! A run whose repository or day budget is already spent is refused before any sandbox
//! starts. A run that starts may spend the least of what its own budget, its
//! repository's month and the day have left; its key forwarder refuses the next model
//! call once that is spent. At 80% of a monthly or daily budget the owner is told once.

use serde::{Deserialize, Serialize};

/// A run's budget unless the owner sets another.
pub const DEFAULT_RUN_BUDGET_USD: f64 = 5.0;

/// The share of a monthly or daily budget at which the owner is told.
pub const NOTICE_AT_SHARE: f64 = 0.8;

/// Dollars as people read them: `$5.00`, and four places below a cent (`$0.0048`), so
/// that a small figure is never rounded to another.
pub fn dollars(usd: f64) -> String {
    if usd > 0.0 && usd < 0.01 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// What a run may spend before its model calls are refused; either part may be unset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SpendLimit {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl SpendLimit {
    pub fn none() -> Self {
        SpendLimit::default()
    }

    /// The limit in words: "$5.00", "200000 tokens", "$5.00 or 200000 tokens".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(usd) = self.usd {
            parts.push(dollars(usd));
        }
        if let Some(tokens) = self.tokens {
            parts.push(format!("{tokens} tokens"));
        }
        if parts.is_empty() {
            "no limit".to_owned()
        } else {
            parts.join(" or ")
        }
    }
}

/// The budgets that apply to one run of one repository.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budgets {
    pub run: SpendLimit,
    pub repo_month_usd: Option<f64>,
    pub day_usd: Option<f64>,
}

/// What was spent already in the budgets' periods.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpentSoFar {
    pub repo_month_usd: f64,
    pub day_usd: f64,
}

/// Why a run may not start: a budget of the period is spent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BudgetRefusal {
    #[error("{repo} has spent {} of its {} budget this month", dollars(*spent), dollars(*budget))]
    RepoMonthSpent {
        repo: String,
        budget: f64,
        spent: f64,
    },
    #[error(
        "Handoff has spent {} of its {} budget for today (UTC)",
        dollars(*spent),
        dollars(*budget)
    )]
    DaySpent { budget: f64, spent: f64 },
    #[error(
        "a full-auto chain of {runs} stages holds back {} (each stage's run budget), and \
         {repo}'s month and the day have {} left",
        dollars(*needs),
        dollars(*left)
    )]
    ChainNeedsMore {
        repo: String,
        runs: u32,
        needs: f64,
        left: f64,
    },
}

impl Budgets {
    /// Refuses a run of `repo` when its month or the day is spent.
    pub fn check_before_run(&self, repo: &str, spent: SpentSoFar) -> Result<(), BudgetRefusal> {
        if let Some(budget) = self.repo_month_usd {
            if spent.repo_month_usd >= budget {
                return Err(BudgetRefusal::RepoMonthSpent {
                    repo: repo.to_owned(),
                    budget,
                    spent: spent.repo_month_usd,
                });
            }
        }
        if let Some(budget) = self.day_usd {
            if spent.day_usd >= budget {
                return Err(BudgetRefusal::DaySpent {
                    budget,
                    spent: spent.day_usd,
                });
            }
        }
        Ok(())
    }

    /// What one run may spend: the least of its own budget and what the month and
    /// the day have left.
    pub fn limit_for_run(&self, spent: SpentSoFar) -> SpendLimit {
        let left = [
            self.run.usd,
            self.repo_month_usd
                .map(|budget| (budget - spent.repo_month_usd).max(0.0)),
            self.day_usd.map(|budget| (budget - spent.day_usd).max(0.0)),
        ];
        SpendLimit {
            usd: left.into_iter().flatten().reduce(f64::min),
            tokens: self.run.tokens,
        }
    }

    /// What `runs` runs of one chain (full auto) may spend together at most, to be
    /// held back from the month and the day while the chain runs.
    pub fn reservation_for(&self, runs: u32) -> Option<f64> {
        self.run.usd.map(|usd| usd * f64::from(runs))
    }

    /// What the month and the day have left together; `None` when neither has a budget.
    pub fn left(&self, spent: SpentSoFar) -> Option<f64> {
        [
            self.repo_month_usd
                .map(|budget| (budget - spent.repo_month_usd).max(0.0)),
            self.day_usd.map(|budget| (budget - spent.day_usd).max(0.0)),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }

    /// Refuses a chain of `runs` stages whose reservation the month or the day cannot
    /// hold; the reservation, when there is one to make.
    pub fn check_reservation(
        &self,
        repo: &str,
        spent: SpentSoFar,
        runs: u32,
    ) -> Result<Option<f64>, BudgetRefusal> {
        let Some(needs) = self.reservation_for(runs) else {
            return Ok(None);
        };
        match self.left(spent) {
            Some(left) if left < needs => Err(BudgetRefusal::ChainNeedsMore {
                repo: repo.to_owned(),
                runs,
                needs,
                left,
            }),
            _ => Ok(Some(needs)),
        }
    }
}

/// Whether `spent` has reached `share` of `budget`.
pub fn reached_share(budget: f64, spent: f64, share: f64) -> bool {
    budget > 0.0 && spent >= budget * share
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets() -> Budgets {
        Budgets {
            run: SpendLimit {
                usd: Some(5.0),
                tokens: None,
            },
            repo_month_usd: Some(50.0),
            day_usd: Some(20.0),
        }
    }

    #[test]
    fn a_spent_month_or_day_refuses_the_run_with_the_figures() {
        let refusal = budgets()
            .check_before_run(
                "octo/app",
                SpentSoFar {
                    repo_month_usd: 50.5,
                    day_usd: 0.0,
                },
            )
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "octo/app has spent $50.50 of its $50.00 budget this month"
        );
        let refusal = budgets()
            .check_before_run(
                "octo/app",
                SpentSoFar {
                    repo_month_usd: 1.0,
                    day_usd: 20.0,
                },
            )
            .unwrap_err();
        assert!(matches!(refusal, BudgetRefusal::DaySpent { .. }));
        assert!(budgets()
            .check_before_run("octo/app", SpentSoFar::default())
            .is_ok());
    }

    #[test]
    fn a_run_may_spend_the_least_of_what_is_left() {
        let limit = budgets().limit_for_run(SpentSoFar {
            repo_month_usd: 48.0,
            day_usd: 1.0,
        });
        assert_eq!(limit.usd, Some(2.0));
        let limit = budgets().limit_for_run(SpentSoFar::default());
        assert_eq!(limit.usd, Some(5.0));
        let unlimited = Budgets {
            run: SpendLimit::none(),
            repo_month_usd: None,
            day_usd: None,
        };
        assert_eq!(unlimited.limit_for_run(SpentSoFar::default()).usd, None);
    }

    #[test]
    fn a_limit_reads_as_its_figures() {
        let limit = |usd, tokens| SpendLimit { usd, tokens }.describe();
        assert_eq!(limit(Some(5.0), None), "$5.00");
        assert_eq!(limit(Some(0.005), None), "$0.0050");
        assert_eq!(limit(Some(1.0), Some(200_000)), "$1.00 or 200000 tokens");
        assert_eq!(limit(None, None), "no limit");
    }

    #[test]
    fn a_chain_reserves_each_stages_budget_or_is_refused() {
        let spent = SpentSoFar {
            repo_month_usd: 35.0,
            day_usd: 0.0,
        };
        assert_eq!(
            budgets().check_reservation("octo/app", SpentSoFar::default(), 4),
            Ok(Some(20.0))
        );
        let refusal = budgets()
            .check_reservation("octo/app", spent, 4)
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "a full-auto chain of 4 stages holds back $20.00 (each stage's run budget), and \
             octo/app's month and the day have $15.00 left"
        );
        let no_run_budget = Budgets {
            run: SpendLimit::none(),
            ..budgets()
        };
        assert_eq!(
            no_run_budget.check_reservation("octo/app", spent, 4),
            Ok(None)
        );
    }

    #[test]
    fn the_eighty_percent_mark_is_reached_at_eighty_percent() {
        assert!(reached_share(50.0, 40.0, NOTICE_AT_SHARE));
        assert!(!reached_share(50.0, 39.99, NOTICE_AT_SHARE));
        assert!(!reached_share(0.0, 1.0, NOTICE_AT_SHARE));
    }
}
