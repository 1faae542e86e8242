//! The `handoff` command line's tests, in one binary: each module runs the real binary
//! as a person does, against the fakes.
//!
//! They drive the program through shell scripts (editors, stand-in agents) and a Secret
//! Service on D-Bus, so they are built and run on Unix only.

#![cfg(unix)]

mod cli;
mod cli_agent_forks;
mod cli_agent_key_docker;
mod cli_archive;
mod cli_automatic_updates;
mod cli_env;
mod cli_env_docker;
mod cli_github;
mod cli_lessons;
mod cli_log;
mod cli_pipeline;
mod cli_qa;
mod cli_queue;
mod cli_queue_overflow_docker;
mod cli_serve;
mod cli_setup;
mod cli_spend;
mod fresh_machine_docker;
mod real_agent_journeys;
mod real_agents_docker;
mod real_agents_local;
mod real_claude_plan;
