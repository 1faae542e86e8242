//! What a Docker sandbox can reach, seen from inside a real container. Two web services
//! run on this machine, listening on every address: one is on the repository's list,
//! the other is not. In allow-list mode the agent reaches the listed one through the
//! egress proxy and nothing else, neither directly nor through the proxy; with no
//! network it reaches nothing; the open network is chosen explicitly and reaches the
//! machine. Nothing is sent to any address outside this machine.

use handoff_test_support as support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bollard::Docker;
use handoff::domain::{NetworkMode, SandboxBackend};
use handoff::pipeline::CodeRunResult;
use handoff::store::RepoSettingsChange;
use support::pipeline_world::PipelineWorld;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A web service on every address of this machine that answers `name` and counts the
/// connections it got.
struct MachineService {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl MachineService {
    async fn start(name: &'static str) -> MachineService {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    continue;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut request = [0u8; 1024];
                    if stream.read(&mut request).await.is_ok() {
                        let answer = format!(
                            "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{name}",
                            name.len()
                        );
                        if let Err(error) = stream.write_all(answer.as_bytes()).await {
                            eprintln!("the test service could not answer: {error}");
                        }
                    }
                });
            }
        });
        MachineService { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// The address containers on the engine's default network reach this machine at.
async fn machine_address_for_containers() -> String {
    let docker = Docker::connect_with_defaults().unwrap();
    handoff::sandbox::docker_egress::machine_address_on_default_network(&docker)
        .await
        .unwrap()
        .to_string()
}

async fn world_with_network(mode: NetworkMode, allowed: &str) -> PipelineWorld {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    world
        .store
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                network_mode: Some(mode),
                allowed_hosts: Some(
                    handoff::domain::network_policy::parse_allowed_hosts(allowed).unwrap(),
                ),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    world
}

fn line_of<'a>(log: &'a str, start: &str) -> &'a str {
    log.lines()
        .find(|line| line.contains(start))
        .unwrap_or_else(|| panic!("no line with {start:?} in the log:\n{log}"))
}

#[tokio::test]
async fn the_allow_list_reaches_a_listed_service_through_the_proxy_and_nothing_else() {
    let listed = MachineService::start("listed").await;
    let unlisted = MachineService::start("unlisted").await;
    let machine = machine_address_for_containers().await;
    let world = world_with_network(
        NetworkMode::Allowlist,
        &format!("{machine}:{}", listed.port),
    )
    .await;

    let feedback = world
        .feedback(
            "Network",
            &format!(
                "@@reach {machine} {listed}\n@@reach {machine} {unlisted}\n\
                 @@fetch http://{machine}:{unlisted}/\n@@fetch http://{machine}:{listed}/\n\
                 @@write n.txt done",
                listed = listed.port,
                unlisted = unlisted.port,
            ),
        )
        .await;
    let report = world.run(&feedback, None).await;
    let log = world.log_text(&report).await;
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{:?}\n{log}",
        report.result
    );

    // Directly, not even the listed service: the network has no way out.
    assert!(
        line_of(&log, &format!("reach {machine}:{} direct", listed.port)).ends_with("refused"),
        "{log}"
    );
    assert!(
        line_of(&log, &format!("reach {machine}:{} direct", unlisted.port)).ends_with("refused"),
        "{log}"
    );
    // Through the proxy: the listed one answers, the other is refused by the proxy.
    let refused = line_of(&log, &format!("fetch http://{machine}:{}/", unlisted.port));
    assert!(refused.contains("403 Forbidden"), "{refused}");
    let fetched = line_of(&log, &format!("fetch http://{machine}:{}/", listed.port));
    assert!(fetched.contains("200 OK"), "{fetched}");
    assert!(fetched.ends_with("listed"), "{fetched}");
    assert_eq!(
        listed.connections(),
        1,
        "only the proxy's request reached it"
    );
    assert_eq!(
        unlisted.connections(),
        0,
        "nothing reached the unlisted service"
    );
}

#[tokio::test]
async fn with_no_network_nothing_is_reached_and_the_open_network_is_a_choice() {
    let service = MachineService::start("service").await;
    let machine = machine_address_for_containers().await;
    let directives = format!(
        "@@reach {machine} {port}\n@@fetch http://{machine}:{port}/\n@@write n.txt done",
        port = service.port
    );

    let closed = world_with_network(NetworkMode::None, "").await;
    let feedback = closed.feedback("No network", &directives).await;
    let report = closed.run(&feedback, None).await;
    let log = closed.log_text(&report).await;
    assert!(line_of(&log, "direct:").ends_with("refused"), "{log}");
    assert!(line_of(&log, "fetch http").ends_with("no proxy"), "{log}");
    assert_eq!(service.connections(), 0);

    let open = world_with_network(NetworkMode::Open, "").await;
    let feedback = open.feedback("Open network", &directives).await;
    let report = open.run(&feedback, None).await;
    let log = open.log_text(&report).await;
    assert!(line_of(&log, "direct:").ends_with("connected"), "{log}");
    assert!(line_of(&log, "fetch http").ends_with("no proxy"), "{log}");
    assert_eq!(service.connections(), 1);
}
