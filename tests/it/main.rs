//! The core's integration tests, in one binary (linking each test file on its own cost
//! a link of the whole dependency tree each): one module per area, named as the files
//! were, so `cargo nextest run -E 'test(/^pipeline_local::/)'` runs one of them.

mod agent_preset_flags;
mod archived_items;
mod automatic_updates;
mod base_conflicts;
mod dependency_graph;
mod e2b_templates;
mod egress_gate;
mod environments_docker;
mod fake_github_conformance;
mod fault_matrix;
mod function_length;
mod github_commands;
mod github_commands_installations;
mod github_managed_comments;
mod github_sync;
mod head_branch_names;
mod kept_copies;
mod kept_copies_docker;
mod lessons_local;
mod lessons_store;
mod meter_corpus;
mod meter_gate_docker;
mod mirror_changes;
mod model_server_conformance;
mod pipeline_docker;
mod pipeline_local;
mod plan_token_forwarding;
mod pull_request_workspace;
mod push_safety;
mod qa_stages_docker;
mod qa_stages_local;
mod review_requests;
mod run_queue_docker;
mod run_queue_local;
mod run_watch;
mod sandbox_e2b;
mod sandbox_network_docker;
mod spend_ledger;
mod spend_store;
mod store_mirror;
mod test_settings_store;
mod trust_boundaries;
mod trust_boundaries_docker;
mod workflows;
