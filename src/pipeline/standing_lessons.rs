//! The owner's standing instructions: every run of a repository (code runs and every
//! stage, not the lessons run itself, which reads them as input) carries the accepted,
//! enabled lessons at the end of its prompt, as the owner's own words. Before that, a
//! lesson whose paths are gone from the base branch is flagged and left out until the
//! owner looks. The run records which lessons it carried.

use super::agent_job::{AgentJob, Stop, WorkingCopy};
use super::Pipeline;
use crate::domain::lesson::standing_instructions;
use crate::domain::Stage;

impl Pipeline {
    /// `prompt` with the repository's standing instructions appended (as it is when
    /// there are none to carry).
    pub(crate) async fn with_standing_lessons(
        &self,
        job: &AgentJob<'_>,
        copy: &WorkingCopy,
        prompt: &str,
    ) -> Result<String, Stop> {
        if job.stage == Stage::Lessons {
            return Ok(prompt.to_owned());
        }
        let lessons = self.store.lessons().lessons_of(job.repo.id).await?;
        if !lessons.iter().any(|lesson| lesson.is_carried()) {
            return Ok(prompt.to_owned());
        }
        let git = self.host_git();
        let base = job.repo.default_branch.as_str();
        let base_ref = format!("refs/heads/{base}");
        let mut carried = Vec::new();
        for lesson in lessons.into_iter().filter(|lesson| lesson.is_carried()) {
            if !lesson.paths.is_empty() {
                match git
                    .paths_missing(&copy.cache, &base_ref, &lesson.paths)
                    .await
                {
                    Ok(missing) if !missing.is_empty() => {
                        self.store
                            .lessons()
                            .flag_vanished_paths(lesson.id, &missing)
                            .await?;
                        let note = format!(
                            "lesson {} was left out: {} no longer on {base} (it waits for you to look)",
                            lesson.id,
                            match missing.as_slice() {
                                [one] => format!("{one} is"),
                                many => format!("{} are", many.join(", ")),
                            }
                        );
                        job.log.say(&format!("note: {note}")).await?;
                        self.store.runs().add_run_note(job.run_id, &note).await?;
                        continue;
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(run = %job.run_id, lesson = %lesson.id, %error,
                            "the paths of a lesson could not be checked on the base branch; it is carried");
                    }
                }
            }
            carried.push(lesson);
        }
        let Some(section) = standing_instructions(&carried) else {
            return Ok(prompt.to_owned());
        };
        self.store
            .lessons()
            .record_carried_lessons(job.run_id, &section.carried)
            .await?;
        job.log
            .say(&format!(
                "the prompt carries {} of your lessons{}",
                section.carried.len(),
                if section.left_out > 0 {
                    format!(" ({} older left out to keep it short)", section.left_out)
                } else {
                    String::new()
                }
            ))
            .await?;
        Ok(format!("{}\n\n{}", prompt.trim_end(), section.text))
    }
}
