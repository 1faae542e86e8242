//! What the scripted agent does in each QA stage of the tests.

/// What the scripted agent does in each QA stage (the repository's custom instructions
/// go into every stage's prompt).
pub const QA_DIRECTIVES: &str = "\
@@review:output Review: the signup button is 20px high; it should be 44px.
@@plan:echo-inputs
@@plan:output 1. Measure the signup button.
@@test:echo-inputs
@@test:result Button height|failed|measured 20px
@@test:result Login works|passed|logged in fine
@@fix:write src/button.css .signup { height: 44px; }
@@fix:output Made the button 44px.";
