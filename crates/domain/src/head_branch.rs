//! Head branch names: `feedback/f2c-{safeId}` for any feedback id.
//!
//! The safe id keeps only `[A-Za-z0-9_-]` of the public id. When that loses anything
//! (other characters dropped, or an id longer than [`SAFE_ID_MAX_CHARS`]), a short hash
//! of the whole id is appended, so two different ids never share a branch; a name that
//! would be empty is the hash alone. The result always passes
//! `git check-ref-format --branch` and stays far below file-name limits.

use sha2::{Digest, Sha256};

use super::feedback::PublicFeedbackId;

/// Every head branch begins with this.
pub const HEAD_BRANCH_PREFIX: &str = "feedback/f2c-";

/// The most characters of the id that a branch name keeps.
pub const SAFE_ID_MAX_CHARS: usize = 64;

/// The head branch for a feedback item.
pub fn head_branch_for(public_id: &PublicFeedbackId) -> String {
    format!("{HEAD_BRANCH_PREFIX}{}", safe_id(public_id.as_str()))
}

/// `[A-Za-z0-9_-]` of `id`, with a hash of the whole id where anything was lost.
pub fn safe_id(id: &str) -> String {
    let kept: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    let lossless = kept.len() == id.len() && !kept.is_empty() && kept.len() <= SAFE_ID_MAX_CHARS;
    if lossless {
        return kept;
    }
    let digest = Sha256::digest(id.as_bytes());
    let hash: String = digest[..5]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let kept: String = kept.chars().take(SAFE_ID_MAX_CHARS).collect();
    if kept.is_empty() {
        hash
    } else {
        format!("{kept}-{hash}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_id_is_kept_as_it_is() {
        assert_eq!(
            head_branch_for(&PublicFeedbackId("fb-abc123".into())),
            "feedback/f2c-fb-abc123"
        );
    }

    #[test]
    fn ids_that_lose_characters_get_a_distinguishing_hash() {
        let dotted = safe_id("a.b");
        let plain = safe_id("ab");
        assert_ne!(dotted, plain);
        assert!(dotted.starts_with("ab-"));
    }

    #[test]
    fn an_id_with_nothing_safe_becomes_its_hash() {
        let name = safe_id("@{..}/ ü");
        assert_eq!(name.len(), 10);
        assert!(name.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn a_long_id_is_cut() {
        let name = safe_id(&"x".repeat(300));
        assert!(name.len() <= SAFE_ID_MAX_CHARS + 11);
    }
}
