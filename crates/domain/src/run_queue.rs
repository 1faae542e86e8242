//! The run queue's rule: which queued runs may start now, on which backend, and the
//! place of each run that waits.
//!
//! Every run waits in the queue until a slot is free. Slots are counted three ways at
//! once: for the whole installation, for each backend (Docker, E2B, local), and for each
//! repository that has slots of its own; a run starts only when all three have room.
//! The order is fair across repositories: each repository's queued runs take turns
//! with the others', counting the runs it already has going, so one repository with
//! twenty queued runs does not hold back another's first. A run that cannot start (its
//! repository or its backend is full) does not hold back the runs behind it. A
//! repository may let a Docker run go to E2B when Docker's slots are full.

use super::ids::{RepoId, RunId};
use super::run::SandboxBackend;

/// The slots of the installation and of each backend (`None`: no limit of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotLimits {
    pub installation: u32,
    pub docker: Option<u32>,
    pub e2b: Option<u32>,
    pub local: Option<u32>,
}

impl SlotLimits {
    /// Two runs at once on a machine of two cores, one per core up to four: the agents
    /// mostly wait on their model, but each sandbox builds and tests on the machine.
    pub fn for_machine(cores: usize) -> SlotLimits {
        SlotLimits {
            installation: cores.clamp(1, 4) as u32,
            docker: None,
            e2b: None,
            local: None,
        }
    }

    fn of_backend(&self, backend: SandboxBackend) -> Option<u32> {
        match backend {
            SandboxBackend::Docker => self.docker,
            SandboxBackend::E2b => self.e2b,
            SandboxBackend::Local => self.local,
        }
    }
}

/// A run that holds a slot now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningRun {
    pub repo_id: RepoId,
    pub backend: SandboxBackend,
}

/// A run waiting in the queue, with what its repository allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedRun {
    pub run_id: RunId,
    pub repo_id: RepoId,
    pub backend: SandboxBackend,
    /// The repository's own slots (`None`: only the installation's and backend's).
    pub repo_slots: Option<u32>,
    /// Whether the repository lets a Docker run go to E2B when Docker is full (and E2B
    /// can be used on this installation).
    pub may_overflow_to_e2b: bool,
}

/// What the queue does with one queued run now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueTurn {
    /// It starts now, on this backend (E2B for a Docker run that overflowed).
    Start { backend: SandboxBackend },
    /// It waits; `place` counts from 1 among the runs that wait.
    Wait { place: u32 },
}

/// Each queued run's turn, in the queue's order (the runs that start first, then the
/// waiting ones by place). `queued` is in the order the runs were queued.
pub fn queue_turns(
    limits: SlotLimits,
    running: &[RunningRun],
    queued: &[QueuedRun],
) -> Vec<(RunId, QueueTurn)> {
    let mut taken = SlotsTaken::default();
    for run in running {
        taken.take(run.repo_id, run.backend);
    }
    // Each repository's queued runs take turns: the first of each repository (after
    // the runs it already has going) before the second of any.
    let mut ordered: Vec<(u32, usize, &QueuedRun)> = Vec::with_capacity(queued.len());
    let mut seen_per_repo: Vec<(RepoId, u32)> = Vec::new();
    for (arrival, run) in queued.iter().enumerate() {
        let earlier = match seen_per_repo
            .iter_mut()
            .find(|(repo, _)| *repo == run.repo_id)
        {
            Some((_, count)) => {
                *count += 1;
                *count - 1
            }
            None => {
                seen_per_repo.push((run.repo_id, 1));
                0
            }
        };
        let round = taken.of_repo(run.repo_id) + earlier;
        ordered.push((round, arrival, run));
    }
    ordered.sort_by_key(|(round, arrival, _)| (*round, *arrival));

    let mut starting = Vec::new();
    let mut waiting = Vec::new();
    for (_, _, run) in ordered {
        let repo_full = run
            .repo_slots
            .is_some_and(|slots| taken.of_repo(run.repo_id) >= slots);
        let installation_full = taken.total >= limits.installation;
        let chosen = if repo_full || installation_full {
            None
        } else if taken.has_room(limits, run.backend) {
            Some(run.backend)
        } else if run.backend == SandboxBackend::Docker
            && run.may_overflow_to_e2b
            && taken.has_room(limits, SandboxBackend::E2b)
        {
            Some(SandboxBackend::E2b)
        } else {
            None
        };
        match chosen {
            Some(backend) => {
                taken.take(run.repo_id, backend);
                starting.push((run.run_id, QueueTurn::Start { backend }));
            }
            None => {
                let place = waiting.len() as u32 + 1;
                waiting.push((run.run_id, QueueTurn::Wait { place }));
            }
        }
    }
    starting.extend(waiting);
    starting
}

/// The slots taken so far, as the turns are given out.
#[derive(Debug, Default)]
struct SlotsTaken {
    total: u32,
    per_backend: [u32; 3],
    per_repo: Vec<(RepoId, u32)>,
}

impl SlotsTaken {
    fn take(&mut self, repo: RepoId, backend: SandboxBackend) {
        self.total += 1;
        self.per_backend[backend_index(backend)] += 1;
        match self.per_repo.iter_mut().find(|(id, _)| *id == repo) {
            Some((_, count)) => *count += 1,
            None => self.per_repo.push((repo, 1)),
        }
    }

    fn of_repo(&self, repo: RepoId) -> u32 {
        self.per_repo
            .iter()
            .find(|(id, _)| *id == repo)
            .map_or(0, |(_, count)| *count)
    }

    fn has_room(&self, limits: SlotLimits, backend: SandboxBackend) -> bool {
        limits
            .of_backend(backend)
            .is_none_or(|slots| self.per_backend[backend_index(backend)] < slots)
    }
}

fn backend_index(backend: SandboxBackend) -> usize {
    match backend {
        SandboxBackend::Docker => 0,
        SandboxBackend::E2b => 1,
        SandboxBackend::Local => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCKER: SandboxBackend = SandboxBackend::Docker;

    fn limits(installation: u32) -> SlotLimits {
        SlotLimits {
            installation,
            docker: None,
            e2b: None,
            local: None,
        }
    }

    fn queued(run: i64, repo: i64) -> QueuedRun {
        QueuedRun {
            run_id: RunId(run),
            repo_id: RepoId(repo),
            backend: DOCKER,
            repo_slots: None,
            may_overflow_to_e2b: false,
        }
    }

    fn starting(turns: &[(RunId, QueueTurn)]) -> Vec<i64> {
        turns
            .iter()
            .filter(|(_, turn)| matches!(turn, QueueTurn::Start { .. }))
            .map(|(run, _)| run.0)
            .collect()
    }

    fn place_of(turns: &[(RunId, QueueTurn)], run: i64) -> Option<u32> {
        turns.iter().find_map(|(id, turn)| match turn {
            QueueTurn::Wait { place } if id.0 == run => Some(*place),
            _ => None,
        })
    }

    #[test]
    fn no_more_start_than_the_installation_has_slots() {
        let queue: Vec<_> = (1..=10).map(|run| queued(run, 1)).collect();
        let turns = queue_turns(limits(2), &[], &queue);
        assert_eq!(starting(&turns), [1, 2]);
        assert_eq!(place_of(&turns, 3), Some(1));
        assert_eq!(place_of(&turns, 10), Some(8));
    }

    #[test]
    fn runs_going_hold_their_slots() {
        let going = [RunningRun {
            repo_id: RepoId(1),
            backend: DOCKER,
        }];
        let turns = queue_turns(limits(2), &going, &[queued(5, 1), queued(6, 1)]);
        assert_eq!(starting(&turns), [5]);
        assert_eq!(place_of(&turns, 6), Some(1));
    }

    #[test]
    fn repositories_take_turns_whatever_order_their_runs_came_in() {
        // Repository 1 queued five runs before repository 2 queued its two.
        let mut queue: Vec<_> = (1..=5).map(|run| queued(run, 1)).collect();
        queue.extend([queued(6, 2), queued(7, 2)]);
        let turns = queue_turns(limits(2), &[], &queue);
        assert_eq!(starting(&turns), [1, 6]);
        // Then they alternate: 2, 7, 3, 4, 5.
        assert_eq!(place_of(&turns, 2), Some(1));
        assert_eq!(place_of(&turns, 7), Some(2));
        assert_eq!(place_of(&turns, 3), Some(3));
    }

    #[test]
    fn a_repository_with_runs_going_waits_behind_one_without() {
        let going = [RunningRun {
            repo_id: RepoId(1),
            backend: DOCKER,
        }];
        let turns = queue_turns(limits(2), &going, &[queued(2, 1), queued(3, 2)]);
        assert_eq!(starting(&turns), [3]);
    }

    #[test]
    fn a_full_repository_does_not_hold_back_the_runs_behind_it() {
        let mut first = queued(1, 1);
        first.repo_slots = Some(1);
        let mut second = queued(2, 1);
        second.repo_slots = Some(1);
        let turns = queue_turns(limits(3), &[], &[first, second, queued(3, 2)]);
        assert_eq!(starting(&turns), [1, 3]);
        assert_eq!(place_of(&turns, 2), Some(1));
    }

    #[test]
    fn a_backend_with_slots_of_its_own_is_kept_to_them() {
        let docker_one = SlotLimits {
            docker: Some(1),
            ..limits(4)
        };
        let mut local = queued(3, 2);
        local.backend = SandboxBackend::Local;
        let turns = queue_turns(docker_one, &[], &[queued(1, 1), queued(2, 1), local]);
        assert_eq!(starting(&turns), [1, 3]);
    }

    #[test]
    fn a_docker_run_overflows_to_e2b_only_where_its_repository_allows() {
        let docker_one = SlotLimits {
            docker: Some(1),
            ..limits(4)
        };
        let mut overflowing = queued(2, 1);
        overflowing.may_overflow_to_e2b = true;
        let turns = queue_turns(docker_one, &[], &[queued(1, 1), overflowing, queued(3, 2)]);
        assert_eq!(
            turns[..2],
            [
                (RunId(1), QueueTurn::Start { backend: DOCKER }),
                (
                    RunId(2),
                    QueueTurn::Start {
                        backend: SandboxBackend::E2b
                    }
                ),
            ]
        );
        assert_eq!(place_of(&turns, 3), Some(1));
    }

    #[test]
    fn the_default_slots_follow_the_machine() {
        assert_eq!(SlotLimits::for_machine(2).installation, 2);
        assert_eq!(SlotLimits::for_machine(0).installation, 1);
        assert_eq!(SlotLimits::for_machine(32).installation, 4);
    }
}
