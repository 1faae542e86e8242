//! Text given on the command line: the argument itself, a file, or standard input ("-").

use std::io::Read as _;
use std::path::PathBuf;

use super::command_error::CliError;

/// The text of `value` ("-" reads stdin) or of `file`.
pub fn read_text(value: Option<String>, file: Option<PathBuf>) -> Result<String, CliError> {
    match (value, file) {
        (Some(value), _) if value == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| {
                    CliError::Usage(format!("cannot read standard input as text: {error}"))
                })?;
            Ok(text)
        }
        (Some(value), _) => Ok(value),
        (None, Some(path)) => {
            let bytes = std::fs::read(&path).map_err(|error| {
                CliError::Usage(format!("cannot read {}: {error}", path.display()))
            })?;
            String::from_utf8(bytes)
                .map_err(|_| CliError::Usage(format!("{} is not UTF-8 text", path.display())))
        }
        (None, None) => Err(CliError::Usage("no text given".to_owned())),
    }
}
