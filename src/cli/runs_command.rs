//! `handoff runs list`.

use super::arguments::RunsCommand;
use super::outcome::CliError;
use super::output::{dash_if_none, print_json, short_time, Table};
use crate::domain::FeedbackId;
use crate::store::{RunFilter, Store};

pub async fn run(store: &Store, command: RunsCommand) -> Result<(), CliError> {
    match command {
        RunsCommand::List {
            feedback,
            active,
            limit,
            output,
        } => {
            let runs = store
                .runs(&RunFilter {
                    feedback_id: feedback.map(FeedbackId),
                    active_only: active,
                    limit,
                })
                .await?;
            if output.json {
                return print_json(&runs);
            }
            if runs.is_empty() {
                println!("no runs");
                return Ok(());
            }
            let mut table = Table::new(&[
                "RUN", "FEEDBACK", "STAGE", "KIND", "BACKEND", "STATUS", "CREATED", "DURATION",
                "COST",
            ]);
            for run in runs {
                table.row(vec![
                    run.id.to_string(),
                    dash_if_none(run.feedback_id),
                    run.stage.to_string(),
                    dash_if_none(run.code_run_kind),
                    run.backend.to_string(),
                    run.status.to_string(),
                    short_time(&run.created_at),
                    dash_if_none(run.duration().map(|d| format!("{}s", d.num_seconds()))),
                    dash_if_none(run.llm_cost_usd.map(|c| format!("${c:.2}"))),
                ]);
            }
            print!("{}", table.render());
            Ok(())
        }
    }
}
