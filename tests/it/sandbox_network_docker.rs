//! What a Docker sandbox can reach, seen from inside a real container and at the real
//! egress gate. Two web services run on this machine, listening on every address: one
//! is on the repository's list (by its address), the other is not. In allow-list mode
//! the agent reaches the listed one through the gate and nothing else, neither directly
//! nor through the gate; with no network it reaches nothing; the open network reaches
//! public addresses only, never this machine. The hostile corpus is sent to the gate
//! itself. A repository's gate outlives its runs and takes new rules in place. Nothing
//! is sent to any address outside this machine.

use handoff_test_support as support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bollard::Docker;
use handoff::domain::network_policy::{parse_allowed_hosts, NetworkPolicy};
use handoff::domain::{NetworkMode, RepoId, SandboxBackend};
use handoff::egress::gate_control::set_rules;
use handoff::pipeline::CodeRunResult;
use handoff::sandbox::docker_gate::{self, EgressGate};
use handoff::store::RepoSettingsChange;
use support::docker_images::GatesRemovedOnDrop;
use support::egress_corpus::{client_hello, corpus_allow_list, hostile_requests, send, status_of};
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
    docker_gate::machine_address_on_default_network(&docker)
        .await
        .unwrap()
        .to_string()
}

async fn world_with_network(mode: NetworkMode, allowed: &str) -> PipelineWorld {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    world
        .store
        .repositories()
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
async fn with_no_network_nothing_is_reached_and_the_open_network_never_reaches_this_machine() {
    let service = MachineService::start("service").await;
    let machine = machine_address_for_containers().await;
    let directives = format!(
        "@@reach {machine} {port}\n@@fetch http://{machine}:{port}/\n\
         @@fetch http://169.254.169.254/latest/meta-data/\n@@write n.txt done",
        port = service.port
    );

    let closed = world_with_network(NetworkMode::None, "").await;
    let feedback = closed.feedback("No network", &directives).await;
    let report = closed.run(&feedback, None).await;
    let log = closed.log_text(&report).await;
    assert!(line_of(&log, "direct:").ends_with("refused"), "{log}");
    assert!(
        line_of(&log, &format!("fetch http://{machine}")).ends_with("no proxy"),
        "{log}"
    );
    assert_eq!(service.connections(), 0);

    // Open: any public address through the gate, but not this machine, its networks or
    // the metadata address, directly or through the gate.
    let open = world_with_network(NetworkMode::Open, "").await;
    let feedback = open.feedback("Open network", &directives).await;
    let report = open.run(&feedback, None).await;
    let log = open.log_text(&report).await;
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{:?}\n{log}",
        report.result
    );
    assert!(line_of(&log, "direct:").ends_with("refused"), "{log}");
    let machine_fetch = line_of(&log, &format!("fetch http://{machine}"));
    assert!(machine_fetch.contains("403 Forbidden"), "{machine_fetch}");
    assert!(
        machine_fetch.contains("the machine the sandbox runs on"),
        "{machine_fetch}"
    );
    let metadata = line_of(&log, "fetch http://169.254.169.254");
    assert!(metadata.contains("403 Forbidden"), "{metadata}");
    assert!(metadata.contains("link-local"), "{metadata}");
    assert_eq!(service.connections(), 0, "nothing reached this machine");
}

/// A gate of its own for a test: an installation nobody else uses, removed at the end.
pub(crate) async fn test_gate(
    purpose: &str,
) -> (EgressGate, GatesRemovedOnDrop, std::net::SocketAddr) {
    let docker = Docker::connect_with_defaults().unwrap();
    let installation = format!("{purpose}{}", std::process::id());
    let removed = GatesRemovedOnDrop(installation.clone());
    let gate = EgressGate::ensure(
        &docker,
        &installation,
        RepoId(1),
        support::pipeline_world::TEST_IMAGE,
    )
    .await
    .unwrap();
    let inspected = docker
        .inspect_container(gate.container_id(), None)
        .await
        .unwrap();
    let address: std::net::IpAddr = inspected
        .network_settings
        .and_then(|settings| settings.networks)
        .and_then(|networks| networks.get("bridge").cloned())
        .and_then(|bridge| bridge.ip_address)
        .and_then(|address| address.parse().ok())
        .expect("the gate has an address on the default network");
    (
        gate,
        removed,
        std::net::SocketAddr::new(address, handoff::egress::PROXY_PORT),
    )
}

#[tokio::test]
async fn the_real_gate_refuses_every_hostile_request() {
    let listed = MachineService::start("listed").await;
    let machine: std::net::Ipv4Addr = machine_address_for_containers().await.parse().unwrap();
    let (gate, _removed, proxy) = test_gate("corpus").await;
    let policy = NetworkPolicy {
        mode: NetworkMode::Allowlist,
        allowed: parse_allowed_hosts(&corpus_allow_list(machine, listed.port)).unwrap(),
    };
    gate.configure(&[set_rules(&policy, docker_gate::this_machines_addresses())])
        .await
        .unwrap();

    let mut wrong = Vec::new();
    for hostile in hostile_requests(machine, listed.port) {
        let answer = send(proxy, &hostile.bytes).await;
        if status_of(&answer) != Some(hostile.refused_with.status()) {
            wrong.push(format!(
                "{}: expected {}, got {:?}",
                hostile.name,
                hostile.refused_with.status(),
                answer.lines().next()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        listed.connections(),
        0,
        "no hostile request reached the service"
    );

    // A tunnel to the listed service whose TLS handshake names another server closes
    // before any byte reaches the service.
    let mut tunnel = tokio::net::TcpStream::connect(proxy).await.unwrap();
    tunnel
        .write_all(format!("CONNECT {machine}:{} HTTP/1.1\r\n\r\n", listed.port).as_bytes())
        .await
        .unwrap();
    let mut established = [0u8; 39];
    tunnel.read_exact(&mut established).await.unwrap();
    tunnel
        .write_all(&client_hello("api.anthropic.com"))
        .await
        .unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        tunnel.read_to_end(&mut rest),
    )
    .await;
    assert!(matches!(closed, Ok(Ok(0)) | Ok(Err(_))), "{closed:?}");
    assert!(
        listed.connections() <= 1,
        "only the tunnel's own connection, with nothing sent on it"
    );

    let plain = send(
        proxy,
        format!(
            "GET http://{machine}:{port}/ HTTP/1.1\r\nHost: {machine}:{port}\r\n\r\n",
            port = listed.port
        )
        .as_bytes(),
    )
    .await;
    assert!(
        plain.ends_with("listed"),
        "the listed service is reached: {plain}"
    );
}

#[tokio::test]
async fn a_repositorys_gate_outlives_its_runs_and_takes_a_new_list_in_place() {
    let first = MachineService::start("first").await;
    let second = MachineService::start("second").await;
    let machine = machine_address_for_containers().await;
    let world =
        world_with_network(NetworkMode::Allowlist, &format!("{machine}:{}", first.port)).await;
    let directives = format!(
        "@@fetch http://{machine}:{first}/\n@@fetch http://{machine}:{second}/\n@@write n.txt done",
        first = first.port,
        second = second.port
    );
    let feedback = world.feedback("Gate", &directives).await;
    let report = world.run(&feedback, None).await;
    let log = world.log_text(&report).await;
    assert!(
        line_of(&log, &format!(":{}/", first.port)).ends_with("first"),
        "{log}"
    );
    assert!(
        line_of(&log, &format!(":{}/", second.port)).contains("403"),
        "{log}"
    );
    let gates = gate_containers(&world.installation).await;
    assert_eq!(gates.len(), 1, "one gate for the repository: {gates:?}");
    assert!(gates[0].1, "still running after the run");

    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                allowed_hosts: Some(
                    parse_allowed_hosts(&format!("{machine}:{}", second.port)).unwrap(),
                ),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let other = world.feedback("Gate again", &directives).await;
    let report = world.run(&other, None).await;
    let log = world.log_text(&report).await;
    assert!(
        line_of(&log, &format!(":{}/", first.port)).contains("403"),
        "{log}"
    );
    assert!(
        line_of(&log, &format!(":{}/", second.port)).ends_with("second"),
        "{log}"
    );
    assert_eq!(
        gate_containers(&world.installation).await,
        gates,
        "the same gate, its list changed in place"
    );
}

#[tokio::test]
async fn a_gate_started_again_is_told_its_rules_again() {
    let listed = MachineService::start("listed").await;
    let machine = machine_address_for_containers().await;
    let world = world_with_network(
        NetworkMode::Allowlist,
        &format!("{machine}:{}", listed.port),
    )
    .await;
    let directives = format!(
        "@@fetch http://{machine}:{port}/\n@@write n.txt done",
        port = listed.port
    );
    // The same rules on every run: the second run's gate is not told them again, the
    // third's (its gate stopped between the runs, so its program forgot them) is.
    for (round, stop_the_gate_first) in [(1, false), (2, false), (3, true)] {
        if stop_the_gate_first {
            let docker = Docker::connect_with_defaults().unwrap();
            for (id, _) in gate_containers(&world.installation).await {
                docker
                    .stop_container(&id, None::<bollard::query_parameters::StopContainerOptions>)
                    .await
                    .unwrap();
            }
            assert!(
                gate_containers(&world.installation)
                    .await
                    .iter()
                    .all(|(_, running)| !running),
                "the gate is stopped"
            );
        }
        let feedback = world.feedback(&format!("Round {round}"), &directives).await;
        let report = world.run(&feedback, None).await;
        let log = world.log_text(&report).await;
        assert!(
            line_of(&log, &format!(":{}/", listed.port)).ends_with("listed"),
            "round {round}: the listed service is reached: {log}"
        );
    }
}

/// This installation's gate containers: (id, running).
async fn gate_containers(installation: &str) -> Vec<(String, bool)> {
    let docker = Docker::connect_with_defaults().unwrap();
    let filters = std::collections::HashMap::from([(
        "label".to_owned(),
        vec![
            format!("dev.handoff.installation={installation}"),
            "dev.handoff.gate".to_owned(),
        ],
    )]);
    docker
        .list_containers(Some(
            bollard::query_parameters::ListContainersOptionsBuilder::default()
                .all(true)
                .filters(&filters)
                .build(),
        ))
        .await
        .unwrap()
        .into_iter()
        .map(|container| {
            (
                container.id.unwrap_or_default(),
                container.state == Some(bollard::models::ContainerSummaryStateEnum::RUNNING),
            )
        })
        .collect()
}

#[tokio::test]
async fn runs_that_start_at_once_share_the_one_gate_their_repository_gets() {
    let docker = Docker::connect_with_defaults().unwrap();
    let installation = format!("at-once{}", std::process::id());
    let _removed = GatesRemovedOnDrop(installation.clone());

    // Four runs of one repository ask for its gate at the same moment, as the run queue's
    // slots let them.
    let asked: Vec<_> = (0..4)
        .map(|_| {
            let docker = docker.clone();
            let installation = installation.clone();
            tokio::spawn(async move {
                EgressGate::ensure(
                    &docker,
                    &installation,
                    RepoId(1),
                    support::pipeline_world::TEST_IMAGE,
                )
                .await
            })
        })
        .collect();
    let mut gates = Vec::new();
    for answer in asked {
        let gate = answer
            .await
            .unwrap()
            .unwrap_or_else(|error| panic!("a run did not get the gate: {error}"));
        gates.push(gate.container_id().to_owned());
    }

    gates.dedup();
    assert_eq!(gates.len(), 1, "one gate, shared: {gates:?}");
    let inspected = docker.inspect_container(&gates[0], None).await.unwrap();
    assert_eq!(
        inspected.state.and_then(|state| state.running),
        Some(true),
        "and it runs"
    );
}
