//! Repository names: `owner/name` as GitHub spells them, parsed from what people type
//! (`owner/name`, `https://github.com/owner/name`, `git@github.com:owner/name.git`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A GitHub repository, `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RepoName {
    pub owner: String,
    pub name: String,
}

/// Why a text is not a repository name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoNameError {
    #[error("bad repository {0:?}: expected owner/name, for example octocat/hello-world")]
    Shape(String),
    #[error(
        "bad repository owner {0:?}: use letters, digits and single hyphens, at most 39 characters"
    )]
    Owner(String),
    #[error(
        "bad repository name {0:?}: use letters, digits, '.', '-' and '_', at most 100 characters"
    )]
    Name(String),
}

impl RepoName {
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    fn owner_is_valid(owner: &str) -> bool {
        !owner.is_empty()
            && owner.len() <= 39
            && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !owner.starts_with('-')
            && !owner.ends_with('-')
    }

    fn name_is_valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 100
            && name != "."
            && name != ".."
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

impl FromStr for RepoName {
    type Err = RepoNameError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        let path = trimmed
            .strip_prefix("https://github.com/")
            .or_else(|| trimmed.strip_prefix("http://github.com/"))
            .or_else(|| trimmed.strip_prefix("git@github.com:"))
            .or_else(|| trimmed.strip_prefix("github.com/"))
            .unwrap_or(trimmed);
        let path = path.trim_end_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        let mut parts = path.split('/');
        let (Some(owner), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(RepoNameError::Shape(text.to_owned()));
        };
        if !RepoName::owner_is_valid(owner) {
            return Err(RepoNameError::Owner(owner.to_owned()));
        }
        if !RepoName::name_is_valid(name) {
            return Err(RepoNameError::Name(name.to_owned()));
        }
        Ok(RepoName {
            owner: owner.to_owned(),
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_forms_people_paste() {
        for text in [
            "octocat/hello-world",
            " https://github.com/octocat/hello-world/ ",
            "git@github.com:octocat/hello-world.git",
            "github.com/octocat/hello-world",
        ] {
            let repo: RepoName = text.parse().unwrap();
            assert_eq!(repo.full_name(), "octocat/hello-world");
        }
    }

    #[test]
    fn refuses_what_github_would_refuse() {
        for text in [
            "octocat",
            "a/b/c",
            "-bad/name",
            "ok/..",
            "ok/sp ace",
            "/name",
            "ünï/x",
        ] {
            assert!(text.parse::<RepoName>().is_err(), "{text} was accepted");
        }
    }
}
