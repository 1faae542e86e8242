//! The prompts of the QA stages: a default template per stage, which a repository
//! may replace, and how a template is filled. Inputs that the owner may have corrected
//! (the review, the plan) go into the prompt verbatim: what the owner sees is what the
//! agent gets.

use super::run::Stage;

/// What a template may name: `{{pr_number}}`, `{{pr_title}}`, `{{branch}}`, `{{base}}`,
/// `{{review}}`, `{{plan}}`, `{{failures}}`, `{{instructions}}`.
#[derive(Debug, Clone, Default)]
pub struct StagePromptValues<'a> {
    pub pr_number: u64,
    pub pr_title: &'a str,
    pub branch: &'a str,
    pub base: &'a str,
    pub review: &'a str,
    pub plan: &'a str,
    pub failures: &'a str,
    pub instructions: &'a str,
}

const REVIEW: &str = "\
You are reviewing pull request #{{pr_number}} ({{pr_title}}): branch `{{branch}}` into `{{base}}`.
The current directory is a checkout of the branch; the PR's diff is in $HANDOFF_INPUT_DIR/diff.patch.

Write a code review in markdown to $HANDOFF_OUTPUT_DIR/output.md: each finding with its file and
line, how serious it is, and what to do about it. Do not change any file.

{{instructions}}
";

const PLAN: &str = "\
You are writing the test plan for pull request #{{pr_number}} ({{pr_title}}): branch `{{branch}}`
into `{{base}}`. The current directory is a checkout of the branch.

This is the code review of the PR as it stands now, with the owner's corrections. Build on it;
where it disagrees with your own judgement, it wins:

{{review}}

Write the test plan in markdown to $HANDOFF_OUTPUT_DIR/output.md: numbered scenarios, each with
its steps and the result expected. Do not change any file.

{{instructions}}
";

const TEST: &str = "\
You are testing pull request #{{pr_number}} ({{pr_title}}): branch `{{branch}}`. The current
directory is a checkout of the branch.

Run exactly this test plan, as it stands now on the PR (the owner may have edited it):

{{plan}}

Write the results to $HANDOFF_OUTPUT_DIR/results.json, one entry per scenario of the plan:
{\"scenarios\": [{\"name\": \"…\", \"passed\": true, \"evidence\": \"what you ran and saw\"}]}
Do not change any file.

{{instructions}}
";

const FIX: &str = "\
You are fixing pull request #{{pr_number}} ({{pr_title}}): branch `{{branch}}`. The current
directory is a checkout of the branch.

These scenarios failed when the test plan was run (from Handoff's stored test results):

{{failures}}

Change the code so that they pass. You may commit; Handoff commits what you leave changed and
pushes it to the PR's branch. Write a short summary of the fix to $HANDOFF_OUTPUT_DIR/output.md.

{{instructions}}
";

const LESSONS: &str = "\
You are drawing lessons from the repository owner's own corrections of an AI agent's work on this
repository. The current directory is a checkout of its default branch, `{{base}}`.

$HANDOFF_INPUT_DIR/corrections.md holds the corrections made since lessons were last drawn: the
owner's edits of the agent's PR comments (review, test plan, results), each as a diff from the
agent's text to the owner's, and the owner's follow-up instructions on feedback PRs. Each is named
by an id such as `edit-12` or `follow-up-7`. $HANDOFF_INPUT_DIR/lessons.md holds the lessons the
owner already accepted: do not propose them again.

Propose the few rules that would have spared the owner these corrections in later runs: only rules
the corrections show, in the owner's spirit, each short and general enough to apply again. Write
them to $HANDOFF_OUTPUT_DIR/lessons.json, exactly in this shape:
{\"lessons\": [{\"rule\": \"one sentence\", \"why\": \"what the owner corrected\",
\"sources\": [\"edit-12\"], \"paths\": [\"src/optional/path.rs\"]}]}
`sources` names the corrections each rule comes from; `paths` (optional) the files or folders it
concerns. Write {\"lessons\": []} when the corrections teach nothing new. Do not change any file.

{{instructions}}
";

/// The template a stage uses unless its repository has its own.
pub fn default_stage_template(stage: Stage) -> Option<&'static str> {
    match stage {
        Stage::Review => Some(REVIEW),
        Stage::Plan => Some(PLAN),
        Stage::Test => Some(TEST),
        Stage::Fix => Some(FIX),
        Stage::Lessons => Some(LESSONS),
        Stage::Code | Stage::FullAuto => None,
    }
}

/// `template` with its placeholders filled in one pass (so a value that happens to hold
/// `{{…}}` is left as it is); unknown placeholders stay as they are.
pub fn fill_stage_template(template: &str, values: &StagePromptValues<'_>) -> String {
    let instructions = if values.instructions.trim().is_empty() {
        String::new()
    } else {
        format!(
            "Instructions from the repository owner:\n\n{}",
            values.instructions.trim()
        )
    };
    let pr_number = values.pr_number.to_string();
    let value_of = |name: &str| -> Option<&str> {
        Some(match name {
            "pr_number" => &pr_number,
            "pr_title" => values.pr_title,
            "branch" => values.branch,
            "base" => values.base,
            "review" => values.review,
            "plan" => values.plan,
            "failures" => values.failures,
            "instructions" => &instructions,
            _ => return None,
        })
    };
    let mut filled = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        filled.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        match after
            .find("}}")
            .and_then(|close| value_of(&after[..close]).map(|value| (close, value)))
        {
            Some((close, value)) => {
                filled.push_str(value);
                rest = &after[close + 2..];
            }
            None => {
                filled.push_str("{{");
                rest = after;
            }
        }
    }
    filled.push_str(rest);
    filled.trim_end().to_owned() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owners_review_goes_into_the_plan_prompt_verbatim() {
        let review = "Owner: the button is **20px**, not fine.\n{{not a placeholder}} {{plan}}";
        let prompt = fill_stage_template(
            default_stage_template(Stage::Plan).unwrap(),
            &StagePromptValues {
                pr_number: 7,
                pr_title: "Bigger button",
                branch: "feedback/f2c-x",
                base: "main",
                review,
                ..StagePromptValues::default()
            },
        );
        assert!(prompt.contains(review), "{prompt}");
        assert!(prompt.contains("pull request #7 (Bigger button)"));
        assert!(!prompt.contains("{{instructions}}"));
    }
}
