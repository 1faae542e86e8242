//! A real Secret Service for tests: a private D-Bus session with gnome-keyring unlocked
//! in it, so the `handoff` binary stores and reads its token through the OS keyring the
//! way it does on a desktop (nothing mocked). Stopped when dropped.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio};

pub struct SecretService {
    dbus: Child,
    keyring: Child,
    address: String,
    _dir: tempfile::TempDir,
}

impl SecretService {
    pub fn start() -> SecretService {
        let dir = tempfile::tempdir().expect("a folder for the session");
        let socket = dir.path().join("bus");
        let mut dbus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .arg(format!("--address=unix:path={}", socket.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon starts (run scripts/install-deps.sh)");
        let mut address = String::new();
        BufReader::new(dbus.stdout.take().expect("dbus stdout"))
            .read_line(&mut address)
            .expect("dbus prints its address");
        let address = address.trim().to_owned();
        let data = dir.path().join("data");
        let runtime = dir.path().join("run");
        std::fs::create_dir_all(&data).expect("data folder");
        std::fs::create_dir_all(&runtime).expect("runtime folder");
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("XDG_DATA_HOME", &data)
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gnome-keyring-daemon starts (run scripts/install-deps.sh)");
        {
            let mut stdin = keyring.stdin.take().expect("keyring stdin");
            stdin
                .write_all(b"test-keyring-password")
                .expect("password written");
        }
        let service = SecretService {
            dbus,
            keyring,
            address,
            _dir: dir,
        };
        service.wait_until_ready();
        service
    }

    fn wait_until_ready(&self) {
        crate::eventually::eventually_blocking("the Secret Service comes up", || {
            let names = Command::new("dbus-send")
                .args([
                    "--session",
                    "--dest=org.freedesktop.DBus",
                    "--type=method_call",
                    "--print-reply",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.ListNames",
                ])
                .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                .output()
                .expect("dbus-send runs");
            String::from_utf8_lossy(&names.stdout)
                .contains("org.freedesktop.secrets")
                .then_some(())
        });
    }

    /// The session bus address a process must be given to reach this keyring.
    pub fn bus_address(&self) -> &str {
        &self.address
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        let _ = self.keyring.kill();
        let _ = self.keyring.wait();
        let _ = self.dbus.kill();
        let _ = self.dbus.wait();
    }
}
