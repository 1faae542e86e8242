//! Printing: aligned text tables for people, JSON for scripts.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::command_error::CliError;
use handoff_api::{schema_version, AppCore};

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|error| CliError::Failure(format!("cannot write JSON: {error}")))?;
    println!("{text}");
    Ok(())
}

/// A text table: a header row and aligned columns; the last column is never padded.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

/// The widest a cell may be before it is cut with an ellipsis.
const CELL_MAX_CHARS: usize = 60;

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            rows: vec![header.iter().map(|cell| cell.to_string()).collect()],
        }
    }

    /// Adds a row; every cell but the last is cut to a cell's width.
    pub fn row(&mut self, cells: Vec<String>) {
        let last = cells.len().saturating_sub(1);
        let cells = cells
            .into_iter()
            .enumerate()
            .map(|(index, cell)| {
                if index == last {
                    flatten(&cell)
                } else {
                    one_line(&cell)
                }
            })
            .collect();
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|column| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut text = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (column, cell) in row.iter().enumerate() {
                if column + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<width$}  ", width = widths[column]));
                }
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

/// `text` on one line.
fn flatten(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` on one line, cut to a cell's width.
pub fn one_line(text: &str) -> String {
    let flat = flatten(text);
    if flat.chars().count() <= CELL_MAX_CHARS {
        flat
    } else {
        let cut: String = flat.chars().take(CELL_MAX_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// A time as people read it in a table: `2026-11-30 03:44` (UTC).
pub fn short_time(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%d %H:%M").to_string()
}

pub fn dash_if_none<T: ToString>(value: Option<T>) -> String {
    value
        .map(|v| v.to_string())
        .unwrap_or_else(|| "-".to_owned())
}

#[derive(Debug, Serialize)]
struct Info<'a> {
    data_dir: &'a Path,
    database: &'a Path,
    schema_version: i64,
    version: &'static str,
}

pub fn print_info(core: &AppCore, json: bool) -> Result<(), CliError> {
    let info = Info {
        data_dir: &core.data_dir,
        database: core.database_path(),
        schema_version: schema_version(),
        version: env!("CARGO_PKG_VERSION"),
    };
    if json {
        return print_json(&info);
    }
    println!("handoff {}", info.version);
    println!("data folder:    {}", info.data_dir.display());
    println!("database:       {}", info.database.display());
    println!("schema version: {}", info.schema_version);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns_and_flattens_cells() {
        let mut table = Table::new(&["ID", "TITLE"]);
        table.row(vec!["1".into(), "line one\nline two".into()]);
        table.row(vec!["100".into(), "x".into()]);
        assert_eq!(
            table.render(),
            "ID   TITLE\n1    line one line two\n100  x\n"
        );
    }
}
