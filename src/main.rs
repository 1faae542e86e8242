//! The `handoff` command line: see `handoff --help`.

fn main() -> std::process::ExitCode {
    handoff::cli::main()
}
