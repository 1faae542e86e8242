//! Choosing the gate's program by its ELF header, for the engine's machine.

use super::*;

/// The first 20 bytes of an ELF program: 64-bit (`class` 2), little-endian (`data` 1),
/// for `machine` (62 is x86-64, 183 AArch64).
fn elf(class: u8, data: u8, machine: u16) -> Vec<u8> {
    let mut header = vec![0x7f, b'E', b'L', b'F', class, data, 1, 0];
    header.resize(18, 0);
    header.extend_from_slice(&machine.to_le_bytes());
    header
}

#[test]
fn an_elf_header_says_which_linux_machine_a_program_is_for() {
    assert_eq!(
        program_kind(&elf(2, 1, 62)),
        ProgramKind::Linux(GateMachine::X86_64)
    );
    assert_eq!(
        program_kind(&elf(2, 1, 183)),
        ProgramKind::Linux(GateMachine::Aarch64)
    );
    assert_eq!(
        program_kind(&elf(1, 1, 3)),
        ProgramKind::OtherElf,
        "32-bit x86"
    );
    assert_eq!(
        program_kind(&elf(2, 2, 62)),
        ProgramKind::OtherElf,
        "big-endian"
    );
    assert_eq!(
        program_kind(&elf(2, 1, 243)),
        ProgramKind::OtherElf,
        "RISC-V"
    );
    // A macOS program (Mach-O 64-bit, arm64) and a Windows one (PE's "MZ").
    let macho = [
        0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(program_kind(&macho), ProgramKind::NotElf);
    let mut pe = b"MZ".to_vec();
    pe.resize(64, 0);
    assert_eq!(program_kind(&pe), ProgramKind::NotElf);
    assert_eq!(program_kind(b"\x7fELF"), ProgramKind::NotElf, "too short");
}

#[test]
fn engines_name_their_machines_both_ways() {
    for (named, machine) in [
        ("x86_64", GateMachine::X86_64),
        ("amd64", GateMachine::X86_64),
        ("aarch64", GateMachine::Aarch64),
        ("arm64", GateMachine::Aarch64),
    ] {
        assert_eq!(GateMachine::of_engine(named), Some(machine), "{named}");
    }
    assert_eq!(GateMachine::of_engine("s390x"), None);
}

fn found(path: &str, kind: ProgramKind) -> Found {
    Found {
        program: GateProgram {
            path: PathBuf::from(path),
            stamp: "1-1".to_owned(),
        },
        kind,
    }
}

#[test]
fn the_program_for_the_engines_machine_is_chosen_whatever_the_hosts() {
    // A macOS package on an Apple machine: its own programs are Mach-O, and it ships
    // the gate for both Linux machines.
    let shipped = [
        found(
            "/Applications/Handoff.app/Contents/MacOS/handoff-egress",
            ProgramKind::NotElf,
        ),
        found(
            "/Applications/Handoff.app/Contents/Resources/handoff-egress-linux-x86_64",
            ProgramKind::Linux(GateMachine::X86_64),
        ),
        found(
            "/Applications/Handoff.app/Contents/Resources/handoff-egress-linux-aarch64",
            ProgramKind::Linux(GateMachine::Aarch64),
        ),
    ];
    let arm = choose(&shipped, &[], "aarch64").unwrap();
    assert!(
        arm.path.ends_with("handoff-egress-linux-aarch64"),
        "{arm:?}"
    );
    let intel = choose(&shipped, &[], "x86_64").unwrap();
    assert!(
        intel.path.ends_with("handoff-egress-linux-x86_64"),
        "{intel:?}"
    );
}

#[test]
fn no_program_for_the_engines_machine_is_refused_saying_what_there_is() {
    let only_intel = [found(
        "/usr/lib/handoff/handoff-egress",
        ProgramKind::Linux(GateMachine::X86_64),
    )];
    let refused = choose(&only_intel, &[], "arm64").unwrap_err();
    assert!(
        refused.contains("Linux containers on aarch64")
            && refused.contains("/usr/lib/handoff/handoff-egress is a program for another machine"),
        "{refused}"
    );
    let looked_at = [PathBuf::from("/opt/handoff/handoff-egress")];
    let missing = choose(&[], &looked_at, "x86_64").unwrap_err();
    assert!(
        missing.contains("is not installed (looked at /opt/handoff/handoff-egress)"),
        "{missing}"
    );
    assert!(choose(&only_intel, &[], "s390x").is_err());
}
