//! The egress gate's parts without Docker: the allow-list proxy under a corpus of
//! hostile requests, TLS handshakes that name another server, redirects, names that
//! lead inward; the key forwarder's refusals and its redirects; and the real
//! `handoff-egress` program taking its rules and keys through its control socket.
//! The services the proxy may reach listen on an address of this machine that the rules
//! list by address; nothing leaves the machine.

use handoff_test_support as support;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use handoff::domain::network_policy::{parse_allowed_hosts, Destination, NetworkPolicy};
use handoff::domain::NetworkMode;
use handoff::egress::client_hello::{first_message, FirstMessage};
use handoff::egress::gate::GateState;
use handoff::egress::gate_control::{set_rules, GateCommand, KeyForTheGate};
use handoff::egress::proxy::{
    admitted_addresses, judge_first_message, serve_proxy, AdmissionRefusal, EgressRules, Resolve,
};
use handoff::egress::GateActivity;
use handoff::sandbox::key_forwarding::{ForwardedKey, KeyForwarder, ModelEndpoint};
use handoff::secrets::Secret;
use support::egress_corpus::{client_hello, corpus_allow_list, hostile_requests, send, status_of};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A service on every address of this machine that counts connections and the bytes it
/// got, and answers with `answer`.
struct Service {
    port: u16,
    connections: Arc<AtomicUsize>,
    bytes: Arc<AtomicUsize>,
}

impl Service {
    async fn start(answer: &'static str) -> Service {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let bytes = Arc::new(AtomicUsize::new(0));
        let (counted, received) = (connections.clone(), bytes.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    continue;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                let received = received.clone();
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    if let Ok(read) = stream.read(&mut request).await {
                        received.fetch_add(read, Ordering::SeqCst);
                        if read > 0 {
                            let _ignored_when_the_client_left =
                                stream.write_all(answer.as_bytes()).await;
                        }
                    }
                });
            }
        });
        Service {
            port,
            connections,
            bytes,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn bytes(&self) -> usize {
        self.bytes.load(Ordering::SeqCst)
    }
}

const OK: &str = "HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nlisted";
const REDIRECT: &str =
    "HTTP/1.0 302 Found\r\nLocation: http://169.254.169.254/latest/meta-data/\r\nContent-Length: 0\r\n\r\n";

/// An IPv4 address of this machine that is not loopback: the corpus's listed service.
fn machine_address() -> Ipv4Addr {
    handoff::sandbox::docker_gate::this_machines_addresses()
        .into_iter()
        .find_map(|address| match address {
            IpAddr::V4(v4) if !v4.is_loopback() => Some(v4),
            _ => None,
        })
        .expect("this machine has a non-loopback IPv4 address")
}

/// A resolver that knows a few names: the engine's gateway name leads to `inward`.
fn resolver(inward: Ipv4Addr) -> Resolve {
    let names: HashMap<&'static str, Vec<IpAddr>> = HashMap::from([
        ("host.docker.internal", vec![IpAddr::V4(inward)]),
        ("localhost", vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
        (
            "metadata.example.org",
            vec!["169.254.169.254".parse().unwrap()],
        ),
        (
            "split.example.org",
            vec![
                "93.184.216.34".parse().unwrap(),
                "10.0.0.7".parse().unwrap(),
            ],
        ),
        ("public.example.org", vec!["93.184.216.34".parse().unwrap()]),
    ]);
    Arc::new(move |name: String, _port| {
        let found = names.get(name.as_str()).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::other(format!("no such name: {name}")))
        })
    })
}

async fn proxy_with(rules: EgressRules, resolve: Resolve) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(serve_proxy(
        listener,
        Arc::new(RwLock::new(rules)),
        resolve,
        GateActivity::default(),
    ));
    address
}

fn allowlist(entries: &str) -> NetworkPolicy {
    NetworkPolicy {
        mode: NetworkMode::Allowlist,
        allowed: parse_allowed_hosts(entries).unwrap(),
    }
}

#[tokio::test]
async fn every_hostile_request_is_refused_and_reaches_nothing() {
    let listed = Service::start(OK).await;
    let machine = machine_address();
    let rules = EgressRules {
        policy: allowlist(&corpus_allow_list(machine, listed.port)),
        this_machine: handoff::sandbox::docker_gate::this_machines_addresses(),
    };
    let proxy = proxy_with(rules, resolver(machine)).await;

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

    // The listed service itself, asked plainly, is reached: the rules are not simply
    // refusing everything.
    let plain = send(
        proxy,
        format!(
            "GET http://{machine}:{port}/ HTTP/1.1\r\nHost: {machine}:{port}\r\n\r\n",
            port = listed.port
        )
        .as_bytes(),
    )
    .await;
    assert!(plain.starts_with("HTTP/1.0 200 OK"), "{plain}");
    assert!(plain.ends_with("listed"), "{plain}");
    assert_eq!(listed.connections(), 1);
}

#[tokio::test]
async fn a_tunnel_whose_tls_handshake_names_another_server_is_closed_unsent() {
    let listed = Service::start(OK).await;
    let machine = machine_address();
    let rules = EgressRules {
        policy: allowlist(&corpus_allow_list(machine, listed.port)),
        this_machine: Vec::new(),
    };
    let proxy = proxy_with(rules, resolver(machine)).await;
    assert_eq!(
        first_message(&client_hello("API.Anthropic.com.")),
        FirstMessage::ClientHello {
            server_name: Some("api.anthropic.com".to_owned())
        },
        "the handshake is read as one, naming its server"
    );

    let mut tunnel = tokio::net::TcpStream::connect(proxy).await.unwrap();
    tunnel
        .write_all(format!("CONNECT {machine}:{} HTTP/1.1\r\n\r\n", listed.port).as_bytes())
        .await
        .unwrap();
    let mut established = [0u8; 39];
    tunnel.read_exact(&mut established).await.unwrap();
    assert!(established.starts_with(b"HTTP/1.1 200 Connection established"));
    tunnel
        .write_all(&client_hello("api.anthropic.com"))
        .await
        .unwrap();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), tunnel.read_to_end(&mut rest)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the tunnel was closed: {read:?} {rest:?}"
    );
    assert_eq!(
        listed.bytes(),
        0,
        "not one byte of the handshake reached the service"
    );

    // A tunnel that is not TLS is passed on as it is.
    let mut tunnel = tokio::net::TcpStream::connect(proxy).await.unwrap();
    tunnel
        .write_all(format!("CONNECT {machine}:{} HTTP/1.1\r\n\r\n", listed.port).as_bytes())
        .await
        .unwrap();
    tunnel.read_exact(&mut established).await.unwrap();
    tunnel.write_all(b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    tunnel.read_to_string(&mut answer).await.unwrap();
    assert!(answer.ends_with("listed"), "{answer}");
}

#[test]
fn a_tunnel_to_a_named_host_must_name_it_in_a_tls_handshake() {
    let name = Destination::Name("api.anthropic.com".to_owned());
    let address = Destination::Address(IpAddr::V4(machine_address()));
    let judged = |bytes: &[u8], destination: &Destination| {
        judge_first_message(&first_message(bytes), destination)
    };
    let plain = b"GET / HTTP/1.0\r\nHost: other.example\r\n\r\n";
    let unnamed = support::egress_corpus::client_hello_without_server_name();
    assert_eq!(
        first_message(&unnamed),
        FirstMessage::ClientHello { server_name: None }
    );
    for (what, bytes) in [
        ("plain HTTP", plain.to_vec()),
        ("a handshake naming no server", unnamed.clone()),
        (
            "a handshake naming another server",
            client_hello("evil.example"),
        ),
    ] {
        assert!(
            matches!(judged(&bytes, &name), Some(Err(_))),
            "{what} to a named host: {:?}",
            judged(&bytes, &name)
        );
    }
    assert_eq!(
        judged(&client_hello("API.Anthropic.com."), &name),
        Some(Ok(()))
    );
    // To an address, a tunnel may carry another protocol, or a handshake naming no
    // server; never one naming a server.
    assert_eq!(judged(plain, &address), Some(Ok(())));
    assert_eq!(judged(&unnamed, &address), Some(Ok(())));
    assert!(matches!(
        judged(&client_hello("api.anthropic.com"), &address),
        Some(Err(_))
    ));
    assert_eq!(
        judged(&[22, 3, 1], &name),
        None,
        "more bytes are waited for"
    );
}

#[tokio::test]
async fn the_proxy_follows_no_redirect() {
    let redirecting = Service::start(REDIRECT).await;
    let machine = machine_address();
    let rules = EgressRules {
        policy: allowlist(&format!("{machine}:{}", redirecting.port)),
        this_machine: Vec::new(),
    };
    let proxy = proxy_with(rules, resolver(machine)).await;
    let answer = send(
        proxy,
        format!(
            "GET http://{machine}:{}/ HTTP/1.1\r\n\r\n",
            redirecting.port
        )
        .as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.0 302 Found"), "{answer}");
    // Following it is a new request, judged as one.
    let followed = send(
        proxy,
        b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n",
    )
    .await;
    assert_eq!(status_of(&followed), Some(403), "{followed}");
}

#[tokio::test]
async fn a_name_is_refused_whole_when_any_of_its_addresses_leads_inward() {
    let rules = EgressRules {
        policy: allowlist("*.example.org:443"),
        this_machine: Vec::new(),
    };
    let resolve = resolver(Ipv4Addr::new(172, 17, 0, 1));
    let name = |text: &str| Destination::Name(text.to_owned());
    assert_eq!(
        admitted_addresses(&rules, &resolve, &name("public.example.org"), 443).await,
        Ok(vec!["93.184.216.34".parse().unwrap()])
    );
    for inward in ["metadata.example.org", "split.example.org"] {
        let refused = admitted_addresses(&rules, &resolve, &name(inward), 443).await;
        assert!(
            matches!(refused, Err(AdmissionRefusal::Refused(_))),
            "{inward}: {refused:?}"
        );
    }
    // Open: any public address, still never inward.
    let open = EgressRules {
        policy: NetworkPolicy {
            mode: NetworkMode::Open,
            allowed: Vec::new(),
        },
        this_machine: Vec::new(),
    };
    assert!(
        admitted_addresses(&open, &resolve, &name("public.example.org"), 22)
            .await
            .is_ok()
    );
    assert!(
        admitted_addresses(&open, &resolve, &name("host.docker.internal"), 80)
            .await
            .is_err()
    );
}

fn anthropic_key(upstream: &str) -> ForwardedKey {
    ForwardedKey::new(
        "ANTHROPIC_API_KEY",
        &["ANTHROPIC_BASE_URL"],
        "",
        "x-api-key",
        "",
        "api.anthropic.com",
        upstream,
        ModelEndpoint::list(&[("POST", "/v1/messages")]),
        Secret::new("sk-ant-real-key"),
    )
}

/// A server that keeps the key header of every request.
async fn key_keeper(answer: &'static str) -> (String, Arc<Mutex<Vec<(String, Option<String>)>>>) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let seen = kept.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push((
                request.uri().path().to_owned(),
                request
                    .headers()
                    .get("x-api-key")
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned),
            ));
            answer
        }
    });
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}"), kept)
}

#[tokio::test]
async fn the_key_forwarder_follows_no_redirect_and_passes_only_model_calls() {
    let (elsewhere, elsewhere_saw) = key_keeper("elsewhere").await;
    // The provider answers every call with a redirect to another host.
    let redirect_to = format!("{elsewhere}/steal");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let provider = format!("http://{}", listener.local_addr().unwrap());
    let provider_saw = Arc::new(AtomicUsize::new(0));
    let counted = provider_saw.clone();
    let router = axum::Router::new().fallback(move || {
        let redirect_to = redirect_to.clone();
        counted.fetch_add(1, Ordering::SeqCst);
        async move { axum::response::Redirect::temporary(&redirect_to) }
    });
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let key = anthropic_key(&provider);
    let forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &key)
        .await
        .unwrap();
    let base = format!("http://{}", forwarder.address());
    let client = handoff::http_client::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    let answer = client
        .post(format!("{base}/v1/messages?beta=true"))
        .header("x-api-key", &key.placeholder)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 307, "the redirect comes back as it is");
    assert_eq!(provider_saw.load(Ordering::SeqCst), 1);
    assert!(
        elsewhere_saw.lock().unwrap().is_empty(),
        "the key never went to where the provider pointed"
    );

    for (method, path) in [
        ("GET", "/v1/files"),
        ("POST", "/v1/files"),
        ("DELETE", "/v1/messages"),
        ("POST", "/v1/messages/../organizations"),
        ("POST", "/admin"),
    ] {
        let refused = client
            .request(method.parse().unwrap(), format!("{base}{path}"))
            .header("x-api-key", &key.placeholder)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "{method} {path}");
    }
    let no_placeholder = client
        .post(format!("{base}/v1/messages"))
        .header("x-api-key", "sk-guess")
        .send()
        .await
        .unwrap();
    assert_eq!(no_placeholder.status(), 403);
    assert_eq!(
        provider_saw.load(Ordering::SeqCst),
        1,
        "nothing refused reached the provider"
    );
}

#[tokio::test]
async fn a_gate_forwards_only_while_it_holds_a_runs_key_and_refuses_a_bad_list_whole() {
    let (provider, provider_saw) = key_keeper("{\"ok\":true}").await;
    let state = GateState::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = handoff::sandbox::key_forwarding::forwarding_router(
        state.keys.clone(),
        state.activity.clone(),
    )
    .unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let key = anthropic_key("https://unused.example");
    let answer = state.apply(GateCommand::AddKey {
        key: KeyForTheGate::of(&key, &provider, Duration::from_secs(60)),
    });
    assert!(answer.ok, "{answer:?}");
    let client = handoff::http_client::default_client();
    let call = || {
        client
            .post(format!("{base}/v1/messages"))
            .header("x-api-key", &key.placeholder)
            .body("{}")
            .send()
    };
    assert_eq!(call().await.unwrap().status(), 200);
    assert_eq!(
        provider_saw.lock().unwrap().clone(),
        vec![(
            "/v1/messages".to_owned(),
            Some("sk-ant-real-key".to_owned())
        )]
    );
    assert!(
        state
            .apply(GateCommand::RemoveKey {
                placeholder: key.placeholder.clone()
            })
            .ok
    );
    assert_eq!(
        call().await.unwrap().status(),
        403,
        "the run's key was given back"
    );
    assert_eq!(provider_saw.lock().unwrap().len(), 1);

    let good = allowlist("api.anthropic.com:443");
    assert!(state.apply(set_rules(&good, Vec::new())).ok);
    let bad = state.apply(GateCommand::SetRules {
        mode: "allowlist".to_owned(),
        allowed: vec![
            "registry.npmjs.org".to_owned(),
            "169.254.169.254".to_owned(),
        ],
        this_machine: Vec::new(),
    });
    assert!(!bad.ok, "{bad:?}");
    assert_eq!(
        state.rules.read().unwrap().policy,
        good,
        "the rules before the bad list stay"
    );
}

#[tokio::test]
async fn the_gate_program_takes_its_rules_through_its_control_socket() {
    let listed = Service::start(OK).await;
    let machine = machine_address();
    let folder = tempfile::tempdir().unwrap();
    let control = folder.path().join("control.sock");
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    };
    let (proxy, forwarder) = (free_port(), free_port());
    let program = support::cargo_binary("handoff-egress");
    let mut gate = tokio::process::Command::new(&program)
        .args([
            "serve",
            "--proxy",
            &proxy.to_string(),
            "--forwarder",
            &forwarder.to_string(),
            "--control",
            control.to_str().unwrap(),
        ])
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();

    let request = format!(
        "GET http://{machine}:{port}/ HTTP/1.1\r\nHost: {machine}:{port}\r\n\r\n",
        port = listed.port
    );
    let configure = |commands: String| {
        let program = program.clone();
        let control = control.clone();
        async move {
            let mut child = tokio::process::Command::new(program)
                .args(["configure", "--control", control.to_str().unwrap()])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut input = child.stdin.take().unwrap();
            input.write_all(commands.as_bytes()).await.unwrap();
            drop(input);
            child.wait_with_output().await.unwrap()
        }
    };
    let set = |policy: &NetworkPolicy| {
        format!(
            "{}\n",
            serde_json::to_string(&set_rules(policy, Vec::new())).unwrap()
        )
    };

    // It starts refusing everything, until its rules come.
    let configured = configure(set(&allowlist(&format!("{machine}:{}", listed.port)))).await;
    let before = send(proxy, b"CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n").await;
    assert_eq!(status_of(&before), Some(403), "{before}");
    assert!(configured.status.success(), "{configured:?}");
    assert!(String::from_utf8_lossy(&configured.stdout).contains("\"ok\":true"));
    let through = send(proxy, request.as_bytes()).await;
    assert!(through.ends_with("listed"), "{through}");

    // Rules changed in place: the same gate now refuses it.
    let narrowed = configure(set(&allowlist("api.anthropic.com:443"))).await;
    assert!(narrowed.status.success());
    let refused = send(proxy, request.as_bytes()).await;
    assert_eq!(status_of(&refused), Some(403), "{refused}");

    let bad = configure("{\"command\":\"set_rules\",\"mode\":\"sideways\",\"allowed\":[],\"this_machine\":[]}\nnot json\n".to_owned()).await;
    assert!(
        !bad.status.success(),
        "a refused command fails the configure step"
    );
    assert_eq!(listed.connections(), 1);
    gate.start_kill().unwrap();
    gate.wait().await.unwrap();
}
