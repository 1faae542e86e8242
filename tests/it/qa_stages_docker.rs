//! The QA stages on the `docker` backend: the whole chain (review, plan, test, fix) in
//! containers of the locally built test image, against the fake GitHub.

use handoff_test_support as support;

use handoff::domain::SandboxBackend;
use support::pipeline_world::{full_auto_journey, PipelineWorld};

#[tokio::test]
async fn full_auto_runs_every_stage_in_containers() {
    full_auto_journey(&PipelineWorld::new(SandboxBackend::Docker).await).await;
}
