//! The Docker sandbox's network when only listed hosts may be reached.
//!
//! The agent's container sits on an internal network of the run's own: the network has
//! no route out and no address on the host (`inhibit_ipv4`), so neither the internet,
//! nor the cloud's metadata address, nor any service of the host, nor another run can
//! be reached from it. The network goes with the run's containers. The one thing on that network besides the agent is the run's egress
//! proxy: a second container, on the internal network and on the engine's default
//! network, that takes `CONNECT host:port` (and plain `http://` requests) and lets
//! through only what the list admits. It refuses any name that resolves to this
//! machine, "any address" or the link-local range, so a name cannot smuggle those in.
//!
//! When the agent needs an API key, the proxy also relays a second port, as it is, to
//! the run's key forwarder on this machine (see [`super::key_forwarding`]): the agent's
//! base address names that port, and the forwarder adds the key on the way out.
//!
//! The proxy is a short Perl program run from the job's own image (Perl is part of every
//! Debian-based image, Handoff's agent images included), with no capabilities, a
//! read-only root and an unprivileged user.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use bollard::models::{ContainerCreateBody, EndpointSettings, HostConfig, NetworkConnectRequest};
use bollard::query_parameters::{CreateContainerOptionsBuilder, LogsOptionsBuilder};
use bollard::Docker;
use futures::StreamExt as _;

use super::SandboxError;
use crate::domain::{NetworkPolicy, SandboxBackend};

/// The port the proxy listens on, inside its container.
pub const PROXY_PORT: u16 = 3128;
/// The port the proxy relays to the run's key forwarder.
pub const KEY_RELAY_PORT: u16 = 3129;

/// What the proxy prints once it listens.
const LISTENING: &str = "egress: listening";

/// The proxy. Reads `HANDOFF_EGRESS_ALLOW` (entries separated by spaces: `host`,
/// `host:port`, `*.domain[:port]`; no port means 443 and 80) and, when set,
/// `HANDOFF_KEY_RELAY` (`ip:port` of the key forwarder, relayed from RELAY_PORT).
const PROXY_PROGRAM: &str = r#"
use strict; use warnings;
use IO::Socket::INET; use IO::Select; use Socket qw(inet_aton inet_ntoa);
$SIG{CHLD} = 'IGNORE'; $| = 1;
my @allow = split ' ', lc($ENV{HANDOFF_EGRESS_ALLOW} // '');
my $server = IO::Socket::INET->new(LocalAddr => '0.0.0.0', LocalPort => PORT, Listen => 128, ReuseAddr => 1)
  or die "egress: cannot listen: $!\n";
if (($ENV{HANDOFF_KEY_RELAY} // '') =~ /^([\d.]+):(\d+)$/) {
  my ($relay_host, $relay_port) = ($1, $2);
  my $relay_server = IO::Socket::INET->new(LocalAddr => '0.0.0.0', LocalPort => RELAY_PORT, Listen => 128, ReuseAddr => 1)
    or die "egress: cannot listen for the key relay: $!\n";
  if (!fork) {
    close $server;
    while (1) {
      my $client = $relay_server->accept or next;
      my $pid = fork;
      if (!defined $pid || $pid) { close $client; next }
      close $relay_server;
      my $up = IO::Socket::INET->new(PeerAddr => $relay_host, PeerPort => $relay_port, Timeout => 20)
        or do { print STDERR "egress: cannot reach the key forwarder\n"; close $client; exit 0 };
      relay($client, $up); exit 0;
    }
  }
  close $relay_server;
}
print STDERR "egress: listening\n";
sub allowed {
  my ($host, $port) = @_;
  for my $rule (@allow) {
    my ($h, $p) = $rule =~ /^(.*?)(?::(\d+))?$/;
    if (defined $p) { next if $p != $port } else { next if $port != 443 && $port != 80 }
    if ($h =~ /^\*\.(.+)$/) { return 1 if $host =~ /\.\Q$1\E$/ } else { return 1 if $host eq $h }
  }
  return 0;
}
sub reply { my ($c, $status) = @_; syswrite $c, "HTTP/1.1 $status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"; close $c; exit 0 }
sub relay {
  my ($x, $y) = @_; my $select = IO::Select->new($x, $y); my $buffer;
  while (my @ready = $select->can_read(600)) {
    for my $from (@ready) {
      my $n = sysread($from, $buffer, 65536); return if !$n;
      my $to = $from == $x ? $y : $x; my $off = 0;
      while ($off < $n) { my $w = syswrite($to, $buffer, $n - $off, $off); return if !defined $w; $off += $w }
    }
  }
}
sub handle {
  my $c = shift; my $head = ''; my $byte;
  while ($head !~ /\r\n\r\n$/) { my $n = sysread($c, $byte, 1); exit 0 if !$n; $head .= $byte; reply($c, '431 Request Header Fields Too Large') if length $head > 65536 }
  my ($line, @fields) = split /\r\n/, $head;
  my ($method, $target, $version) = split / /, $line;
  my ($host, $port, $path);
  if ($method eq 'CONNECT') { ($host, $port) = $target =~ /^([^:\/]+):(\d+)$/ or reply($c, '400 Bad Request') }
  elsif ($target =~ m{^http://([^/:]+)(?::(\d+))?(/.*)?$}i) { ($host, $port, $path) = ($1, $2 // 80, $3 // '/') }
  else { reply($c, '400 Bad Request') }
  $host = lc $host;
  if (!allowed($host, $port)) { print STDERR "egress: refused $host:$port (not on the list)\n"; reply($c, '403 Forbidden') }
  my $packed = inet_aton($host) or do { print STDERR "egress: cannot resolve $host\n"; reply($c, '502 Bad Gateway') };
  my $ip = inet_ntoa($packed);
  if ($ip =~ /^(127\.|169\.254\.|0\.)/) { print STDERR "egress: refused $host:$port ($ip is never reachable)\n"; reply($c, '403 Forbidden') }
  my $up = IO::Socket::INET->new(PeerAddr => $ip, PeerPort => $port, Timeout => 20)
    or do { print STDERR "egress: cannot reach $host:$port\n"; reply($c, '502 Bad Gateway') };
  print STDERR "egress: $method $host:$port\n";
  if ($method eq 'CONNECT') { syswrite $c, "HTTP/1.1 200 Connection established\r\n\r\n" }
  else { syswrite $up, join("\r\n", "$method $path $version", grep({ !/^proxy-/i } @fields)) . "\r\n\r\n" }
  relay($c, $up);
}
while (1) {
  my $client = $server->accept or next;
  my $pid = fork;
  if (!defined $pid) { close $client; next }
  if ($pid) { close $client; next }
  close $server; handle($client); exit 0;
}
"#;

fn unavailable(detail: impl Into<String>) -> SandboxError {
    SandboxError::Unavailable {
        backend: SandboxBackend::Docker,
        detail: detail.into(),
    }
}

/// Makes the run's own internal network, `name`, carrying the run's labels (so that a
/// restart finds it after a crash). Each run has its own: nothing of one run can reach
/// another's.
pub async fn create_run_network(
    docker: &Docker,
    name: &str,
    labels: &HashMap<String, String>,
) -> Result<(), SandboxError> {
    let mut options = HashMap::new();
    // No address for the host on this network: the host's services cannot be reached.
    options.insert(
        "com.docker.network.bridge.inhibit_ipv4".to_owned(),
        "true".to_owned(),
    );
    docker
        .create_network(bollard::models::NetworkCreateRequest {
            name: name.to_owned(),
            driver: Some("bridge".to_owned()),
            internal: Some(true),
            options: Some(options),
            labels: Some(labels.clone()),
            ..Default::default()
        })
        .await
        .map_err(|error| {
            unavailable(format!(
                "cannot make the sandbox's internal network: {error}"
            ))
        })?;
    Ok(())
}

/// The address containers on the engine's default network reach this machine at: the
/// network's gateway, or, for engines that leave it out, its range's first address.
pub async fn machine_address_on_default_network(docker: &Docker) -> Result<IpAddr, SandboxError> {
    let bridge = docker
        .inspect_network(
            "bridge",
            None::<bollard::query_parameters::InspectNetworkOptions>,
        )
        .await
        .map_err(|error| {
            unavailable(format!("cannot read the engine's default network: {error}"))
        })?;
    let config = bridge
        .ipam
        .and_then(|ipam| ipam.config)
        .and_then(|configs| {
            configs.into_iter().find(|config| {
                config
                    .subnet
                    .as_deref()
                    .is_some_and(|subnet| subnet.contains('.'))
            })
        })
        .ok_or_else(|| unavailable("the engine's default network has no IPv4 address range"))?;
    if let Some(gateway) = config.gateway.and_then(|gateway| gateway.parse().ok()) {
        return Ok(gateway);
    }
    let first = config
        .subnet
        .as_deref()
        .and_then(|subnet| subnet.split('/').next())
        .and_then(|network| network.parse::<Ipv4Addr>().ok())
        .ok_or_else(|| unavailable("the engine's default network has no IPv4 address range"))?;
    Ok(IpAddr::V4(Ipv4Addr::from(u32::from(first) + 1)))
}

/// Removes a run's network (after its containers), saying so in the log if it cannot.
pub async fn remove_run_network(docker: &Docker, name: &str) {
    if let Err(error) = docker.remove_network(name).await {
        tracing::warn!(network = name, %error, "the sandbox's network could not be removed");
    }
}

/// The allow-list as the proxy reads it.
pub fn allow_list_text(policy: &NetworkPolicy) -> String {
    policy
        .allowed
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Creates and starts the run's egress proxy on `network` and returns its container id
/// once it listens. The proxy's address for the agent is `http://{name}:3128`; with
/// `key_relay_to`, `http://{name}:3129` reaches the run's key forwarder.
pub async fn start_proxy(
    docker: &Docker,
    image: &str,
    name: &str,
    network: &str,
    labels: HashMap<String, String>,
    policy: &NetworkPolicy,
    key_relay_to: Option<SocketAddr>,
) -> Result<String, SandboxError> {
    let mut environment = vec![format!("HANDOFF_EGRESS_ALLOW={}", allow_list_text(policy))];
    if let Some(forwarder) = key_relay_to {
        environment.push(format!("HANDOFF_KEY_RELAY={forwarder}"));
    }
    let body = ContainerCreateBody {
        image: Some(image.to_owned()),
        cmd: Some(vec![
            "perl".to_owned(),
            "-e".to_owned(),
            PROXY_PROGRAM
                .replace("RELAY_PORT", &KEY_RELAY_PORT.to_string())
                .replace("PORT", &PROXY_PORT.to_string()),
        ]),
        env: Some(environment),
        user: Some("65534:65534".to_owned()),
        labels: Some(labels),
        host_config: Some(HostConfig {
            memory: Some(256 * 1024 * 1024),
            memory_swap: Some(256 * 1024 * 1024),
            pids_limit: Some(512),
            cap_drop: Some(vec!["ALL".to_owned()]),
            readonly_rootfs: Some(true),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            network_mode: Some("bridge".to_owned()),
            ..HostConfig::default()
        }),
        ..ContainerCreateBody::default()
    };
    let created = docker
        .create_container(
            Some(CreateContainerOptionsBuilder::default().name(name).build()),
            body,
        )
        .await
        .map_err(|error| unavailable(format!("cannot create the egress proxy: {error}")))?;
    docker
        .connect_network(
            network,
            NetworkConnectRequest {
                container: created.id.clone(),
                endpoint_config: Some(EndpointSettings {
                    aliases: Some(vec![name.to_owned()]),
                    ..EndpointSettings::default()
                }),
            },
        )
        .await
        .map_err(|error| {
            unavailable(format!(
                "cannot put the egress proxy on the internal network: {error}"
            ))
        })?;
    docker
        .start_container(&created.id, None)
        .await
        .map_err(|error| unavailable(format!("cannot start the egress proxy: {error}")))?;
    wait_until_listening(docker, &created.id, image).await?;
    Ok(created.id)
}

/// Waits (up to 15 s) for the proxy's "listening" line.
async fn wait_until_listening(docker: &Docker, id: &str, image: &str) -> Result<(), SandboxError> {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut said = String::new();
    while Instant::now() < deadline {
        said.clear();
        let mut logs = docker.logs(
            id,
            Some(
                LogsOptionsBuilder::default()
                    .stdout(true)
                    .stderr(true)
                    .build(),
            ),
        );
        while let Some(next) = logs.next().await {
            match next {
                Ok(output) => said.push_str(&String::from_utf8_lossy(&output.into_bytes())),
                Err(error) => {
                    tracing::debug!(%error, "the egress proxy's output could not be read; asked again");
                    break;
                }
            }
        }
        if said.contains(LISTENING) {
            return Ok(());
        }
        let running = match docker
            .inspect_container(
                id,
                None::<bollard::query_parameters::InspectContainerOptions>,
            )
            .await
        {
            Ok(container) => container
                .state
                .and_then(|state| state.running)
                .unwrap_or(false),
            Err(error) => {
                tracing::warn!(%error, "the egress proxy's container cannot be inspected; it counts as stopped");
                false
            }
        };
        if !running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(unavailable(format!(
        "the egress proxy did not start in the image {image} (it runs with the image's perl): \
         {}",
        said.trim()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_reads_the_list_as_entries_separated_by_spaces() {
        let policy = NetworkPolicy {
            mode: crate::domain::NetworkMode::Allowlist,
            allowed: vec![
                "api.anthropic.com:443".parse().unwrap(),
                "*.npmjs.org".parse().unwrap(),
            ],
        };
        assert_eq!(
            allow_list_text(&policy),
            "api.anthropic.com:443 *.npmjs.org"
        );
    }
}
