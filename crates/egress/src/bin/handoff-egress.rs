//! `handoff-egress`: the egress gate that runs in a container beside a repository's
//! Docker sandboxes (see `handoff_egress`). Not meant to be run by hand.
//!
//! - `handoff-egress serve [--proxy ADDR] [--forwarder ADDR] [--control PATH]
//!   [--idle-exit SECONDS]`: the proxy, the key forwarder and the control socket.
//! - `handoff-egress configure [--control PATH]`: sends the commands on standard input
//!   (one JSON object per line) to a serving gate and prints its answers; exits 1 when
//!   one failed.
//! - `handoff-egress hold-key [--control PATH]`: joins standard input and output to the
//!   gate's control socket both ways until the gate closes it: a run's key held on a
//!   link of its own.

use std::path::PathBuf;
use std::process::ExitCode;
#[cfg(unix)]
use std::time::Duration;

const USAGE: &str = "usage: handoff-egress serve [--proxy ADDR] [--forwarder ADDR] [--control PATH] [--idle-exit SECONDS]\n       handoff-egress configure [--control PATH]\n       handoff-egress hold-key [--control PATH]";
const DEFAULT_CONTROL: &str = "/run/handoff-gate/control.sock";

fn value_of(arguments: &[String], flag: &str) -> Option<String> {
    arguments
        .iter()
        .position(|argument| argument == flag)
        .and_then(|index| arguments.get(index + 1).cloned())
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HANDOFF_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("handoff-egress: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let control = PathBuf::from(
        value_of(&arguments, "--control").unwrap_or_else(|| DEFAULT_CONTROL.to_owned()),
    );
    match arguments.first().map(String::as_str) {
        Some("serve") => serve(&arguments, control, &runtime),
        Some("configure") => configure(control, &runtime),
        Some("hold-key") => hold_key(control, &runtime),
        Some("--version") => {
            println!("handoff-egress {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(unix)]
fn serve(arguments: &[String], control: PathBuf, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let address = |flag: &str, default: u16| match value_of(arguments, flag) {
        Some(text) => text
            .parse()
            .map_err(|error| format!("{flag} {text}: {error}")),
        None => Ok(std::net::SocketAddr::from(([0, 0, 0, 0], default))),
    };
    let options = (|| -> Result<handoff_egress::gate::GateOptions, String> {
        Ok(handoff_egress::gate::GateOptions {
            proxy: address("--proxy", handoff_egress::PROXY_PORT)?,
            forwarder: address("--forwarder", handoff_egress::FORWARDER_PORT)?,
            control,
            idle_exit: match value_of(arguments, "--idle-exit") {
                Some(seconds) => {
                    Some(Duration::from_secs(seconds.parse().map_err(|error| {
                        format!("--idle-exit {seconds}: {error}")
                    })?))
                }
                None => None,
            },
        })
    })();
    let options = match options {
        Ok(options) => options,
        Err(refusal) => {
            eprintln!("handoff-egress: {refusal}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(handoff_egress::gate::serve_gate(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("handoff-egress: the gate stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
fn configure(control: PathBuf, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let sent = runtime.block_on(handoff_egress::gate::configure(
        &control,
        tokio::io::stdin(),
        tokio::io::stdout(),
        Duration::from_secs(10),
    ));
    match sent {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!(
                "handoff-egress: cannot reach the gate at {}: {error}",
                control.display()
            );
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
fn hold_key(control: PathBuf, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let linked = runtime.block_on(handoff_egress::gate::relay(
        &control,
        tokio::io::stdin(),
        tokio::io::stdout(),
        Duration::from_secs(10),
    ));
    // Standard input is read on a thread of its own, which would keep the program
    // waiting for input it no longer needs: it ends here, with the link.
    match linked {
        Ok(()) => std::process::exit(0),
        Err(error) => {
            eprintln!(
                "handoff-egress: the link to the gate at {} broke: {error}",
                control.display()
            );
            std::process::exit(1)
        }
    }
}

#[cfg(not(unix))]
fn hold_key(_: PathBuf, _: &tokio::runtime::Runtime) -> ExitCode {
    eprintln!("handoff-egress: the gate runs only in a Linux container");
    ExitCode::FAILURE
}

#[cfg(not(unix))]
fn serve(_: &[String], _: PathBuf, _: &tokio::runtime::Runtime) -> ExitCode {
    eprintln!("handoff-egress: the gate runs only in a Linux container");
    ExitCode::FAILURE
}

#[cfg(not(unix))]
fn configure(_: PathBuf, _: &tokio::runtime::Runtime) -> ExitCode {
    eprintln!("handoff-egress: the gate runs only in a Linux container");
    ExitCode::FAILURE
}
