//! `handoff spend`: a month's spend, of one repository or of all, per day, per item, per
//! model and per stage, against the budget; and how a run's spend and steps read.

use chrono::{NaiveDate, TimeZone as _, Utc};
use clap::Args;

use super::command_error::CliError;
use super::output::{print_json, Table};
use super::terminal_text::printable;
use handoff_api::core_types::AgentStep;
use handoff_api::core_types::{dollars, MonthSpend};
use handoff_api::core_types::{PaidWith, RepoName, Run, SpendSource};
use handoff_api::AppCore;

/// Show what runs cost this month (or another): per day, the top items, per model
/// and per stage, against the repository's monthly budget.
#[derive(Debug, Args)]
pub struct SpendArguments {
    /// One repository (`owner/name`); all of them when left out.
    #[arg(long)]
    pub repo: Option<RepoName>,
    /// The month, as `2026-12`; the current one when left out.
    #[arg(long, value_name = "YYYY-MM")]
    pub month: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A token count as people read it: `950`, `2.4k`, `1.2M`.
pub fn token_count(tokens: i64) -> String {
    match tokens {
        t if t >= 1_000_000 => format!("{:.1}M", t as f64 / 1_000_000.0),
        t if t >= 1_000 => format!("{:.1}k", t as f64 / 1_000.0),
        t => t.to_string(),
    }
}

/// A run's spend in one line: `$0.0123 · 3.6k tokens in, 240 out (metered)`.
pub fn run_spend(run: &Run) -> String {
    let tokens = match (run.tokens_in, run.tokens_out) {
        (None, None) => None,
        (tokens_in, tokens_out) => Some(format!(
            "{} tokens in, {} out",
            token_count(tokens_in.unwrap_or(0)),
            token_count(tokens_out.unwrap_or(0))
        )),
    };
    let unpriced = run.unpriced_tokens.filter(|tokens| *tokens > 0);
    let cost = match (run.llm_cost_usd, unpriced, &tokens) {
        (Some(cost), None, _) => Some(dollars(cost)),
        (Some(cost), Some(unpriced), _) => Some(format!(
            "{} + {} tokens at an unknown price",
            dollars(cost),
            token_count(unpriced)
        )),
        (None, _, Some(_)) => Some("price unknown".to_owned()),
        (None, _, None) => None,
    };
    let source = match (run.spend_source, run.paid_with) {
        (Some(SpendSource::Metered), Some(PaidWith::ClaudePlan)) => {
            " (metered, from the Claude plan's credit)"
        }
        (Some(SpendSource::Reported), Some(PaidWith::ClaudePlan)) => {
            " (as reported by the agent, from the Claude plan's credit)"
        }
        (Some(SpendSource::Metered), _) => " (metered)",
        (Some(SpendSource::Reported), _) => " (as reported by the agent)",
        (None, _) => "",
    };
    match (cost, tokens) {
        (Some(cost), Some(tokens)) => format!("{cost} · {tokens}{source}"),
        (Some(cost), None) => format!("{cost}{source}"),
        (None, _) => "not known".to_owned(),
    }
}

/// One step in one line, for `handoff runs steps`.
pub fn step_line(position: usize, step: &AgentStep) -> Vec<String> {
    let calls: Vec<String> = step
        .tool_calls
        .iter()
        .map(|call| {
            let input = printable(&call.input).replace('\n', " ");
            let short: String = input.chars().take(80).collect();
            format!("{}({short})", printable(&call.name))
        })
        .collect();
    let what = if calls.is_empty() {
        printable(&step.text).replace('\n', " ")
    } else {
        calls.join(", ")
    };
    vec![
        (position + 1).to_string(),
        step.began_at.format("%H:%M:%S").to_string(),
        format!("{:.1}s", step.duration_ms as f64 / 1000.0),
        printable(&step.model),
        token_count(i64::try_from(step.usage.all_input()).unwrap_or(i64::MAX)),
        token_count(i64::try_from(step.usage.output).unwrap_or(i64::MAX)),
        step.cost_usd
            .map_or_else(|| "price unknown".to_owned(), dollars),
        if step.status == 200 {
            what
        } else {
            format!("HTTP {} {what}", step.status)
        },
    ]
}

/// The table of a run's steps.
pub fn steps_table(steps: &[AgentStep]) -> String {
    let mut table = Table::new(&["STEP", "AT", "TOOK", "MODEL", "IN", "OUT", "COST", "WHAT"]);
    for (position, step) in steps.iter().enumerate() {
        table.row(step_line(position, step));
    }
    table.render()
}

/// The first instant of `month` (`2026-12`).
fn month_start(month: &str) -> Result<chrono::DateTime<Utc>, CliError> {
    let day = NaiveDate::parse_from_str(&format!("{}-01", month.trim()), "%Y-%m-%d")
        .map_err(|_| CliError::Usage(format!("--month {month:?}: write it as 2026-12")))?;
    Ok(Utc.from_utc_datetime(&day.and_hms_opt(0, 0, 0).unwrap_or_default()))
}

/// The month's days, its costliest items, and its spend per model and per stage.
fn print_tables(month: &MonthSpend) {
    let spent_days: Vec<_> = month.days.iter().filter(|day| day.runs > 0).collect();
    if !spent_days.is_empty() {
        let mut table = Table::new(&["DAY", "RUNS", "TOKENS", "COST"]);
        for day in spent_days {
            table.row(vec![
                day.day.to_string(),
                day.runs.to_string(),
                token_count(day.tokens),
                dollars(day.cost_usd),
            ]);
        }
        println!("\n{}", table.render().trim_end());
    }
    if !month.top_items.is_empty() {
        let mut table = Table::new(&["ITEM", "RUNS", "TOKENS", "COST", "TITLE"]);
        for item in &month.top_items {
            let name = match (item.feedback_id, item.pr_number) {
                (Some(id), _) => format!("{} feedback {id}", item.repo),
                (None, Some(number)) => format!("{} PR #{number}", item.repo),
                (None, None) => item.repo.clone(),
            };
            table.row(vec![
                name,
                item.runs.to_string(),
                token_count(item.tokens),
                dollars(item.cost_usd),
                printable(item.title.as_deref().unwrap_or("")),
            ]);
        }
        println!("\ntop items\n{}", table.render().trim_end());
    }
    for (title, parts) in [
        ("per model", &month.by_model),
        ("per stage", &month.by_stage),
    ] {
        if parts.is_empty() {
            continue;
        }
        let mut table = Table::new(&["NAME", "TOKENS", "COST"]);
        for part in parts {
            table.row(vec![
                printable(&part.name),
                token_count(part.tokens),
                dollars(part.cost_usd),
            ]);
        }
        println!("\n{title}\n{}", table.render().trim_end());
    }
}

pub async fn run(core: &AppCore, arguments: SpendArguments) -> Result<(), CliError> {
    let start = match &arguments.month {
        Some(month) => month_start(month)?,
        None => Utc::now(),
    };
    let (month, plan) =
        handoff_api::spend::month_spent(core, arguments.repo.as_ref(), start).await?;
    if arguments.json {
        return print_json(&month);
    }
    let whose = month.repo.as_deref().unwrap_or("all repositories");
    println!("{whose}, {}: {}", month.month, dollars(month.cost_usd));
    if let Some(budget) = month.budget_usd {
        println!(
            "budget:   {} a month ({:.0}% spent)",
            dollars(budget),
            if budget > 0.0 {
                month.cost_usd / budget * 100.0
            } else {
                100.0
            }
        );
    }
    if let Some(plan) = plan {
        println!(
            "plan:     {} drew {} of its {} monthly credit, at API prices (every repository){}",
            plan.plan.label(),
            dollars(month.paid_with_plan_usd),
            dollars(plan.plan.monthly_credit_usd()),
            if plan.month_budget_usd().is_some() {
                "; its runs stop once it is drawn"
            } else {
                "; past it, the account pays API rates"
            }
        );
    }
    println!(
        "tokens:   {} in {} run(s)",
        token_count(month.tokens),
        month.runs
    );
    if month.unpriced_tokens > 0 || month.runs_without_cost > 0 {
        println!(
            "unpriced: {} tokens of models with no price, {} run(s) with no cost known \
             (the total leaves them out)",
            token_count(month.unpriced_tokens),
            month.runs_without_cost
        );
    }
    print_tables(&month);
    Ok(())
}
