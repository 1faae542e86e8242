//! What a repository asks for on the PRs Handoff opens: labels to put on them, and the
//! people or teams to request reviews from. Typed by the owner (entries separated by
//! lines, commas or spaces), checked here against what GitHub accepts.

use serde::Serialize;

/// The longest label name GitHub accepts.
const LABEL_MAX_CHARS: usize = 50;
/// The longest GitHub login.
const LOGIN_MAX_CHARS: usize = 39;

/// Someone to request a review from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Reviewer {
    /// A person, by login.
    User(String),
    /// A team of the repository's organization: `org/team`, requested by its slug.
    Team { organization: String, slug: String },
}

impl std::fmt::Display for Reviewer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reviewer::User(login) => write!(formatter, "{login}"),
            Reviewer::Team { organization, slug } => write!(formatter, "{organization}/{slug}"),
        }
    }
}

/// Labels as typed: one a line or comma-separated (a label may hold spaces); each at
/// most 50 characters, duplicates dropped.
pub fn parse_labels(text: &str) -> Result<Vec<String>, String> {
    let mut labels: Vec<String> = Vec::new();
    for label in text
        .split(['\n', ','])
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        if label.chars().count() > LABEL_MAX_CHARS {
            return Err(format!(
                "the label {label:?} is longer than GitHub's {LABEL_MAX_CHARS} characters"
            ));
        }
        if !labels.iter().any(|known| known.eq_ignore_ascii_case(label)) {
            labels.push(label.to_owned());
        }
    }
    Ok(labels)
}

fn is_login(text: &str) -> bool {
    !text.is_empty()
        && text.chars().count() <= LOGIN_MAX_CHARS
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

fn is_team_slug(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Reviewers as typed: logins (`@` optional) and teams (`org/team`), separated by lines,
/// commas or spaces; duplicates dropped.
pub fn parse_reviewers(text: &str) -> Result<Vec<Reviewer>, String> {
    let mut reviewers: Vec<Reviewer> = Vec::new();
    for entry in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|entry| !entry.is_empty())
    {
        let entry = entry.trim_start_matches('@');
        let reviewer = match entry.split_once('/') {
            Some((organization, slug)) if is_login(organization) && is_team_slug(slug) => {
                Reviewer::Team {
                    organization: organization.to_owned(),
                    slug: slug.to_ascii_lowercase(),
                }
            }
            None if is_login(entry) => Reviewer::User(entry.to_owned()),
            _ => {
                return Err(format!(
                    "{entry:?} is neither a GitHub login nor a team written org/team"
                ))
            }
        };
        let known = reviewers.iter().any(|known| {
            known
                .to_string()
                .eq_ignore_ascii_case(&reviewer.to_string())
        });
        if !known {
            reviewers.push(reviewer);
        }
    }
    Ok(reviewers)
}

/// How a list is stored: one entry a line.
pub fn stored_lines<T: std::fmt::Display>(entries: &[T]) -> String {
    entries
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_split_on_lines_and_commas_and_keep_their_spaces() {
        assert_eq!(
            parse_labels("handoff, needs review\nbot\nBOT").unwrap(),
            ["handoff", "needs review", "bot"]
        );
        assert_eq!(parse_labels("  ").unwrap(), Vec::<String>::new());
        assert!(parse_labels(&"x".repeat(51))
            .unwrap_err()
            .contains("50 characters"));
    }

    #[test]
    fn reviewers_are_logins_or_teams() {
        assert_eq!(
            parse_reviewers("@alice, bob\nocto-org/Core_Team alice").unwrap(),
            [
                Reviewer::User("alice".to_owned()),
                Reviewer::User("bob".to_owned()),
                Reviewer::Team {
                    organization: "octo-org".to_owned(),
                    slug: "core_team".to_owned()
                },
            ]
        );
        assert!(parse_reviewers("not a/valid/team").is_err());
        assert!(parse_reviewers("-alice").is_err());
        assert!(parse_reviewers("alice!")
            .unwrap_err()
            .contains("neither a GitHub login"));
    }
}
