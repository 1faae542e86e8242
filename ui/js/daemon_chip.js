// @ts-check
// The toolbar's word that a daemon (`handoff serve`) serves this data folder: it looks
// after the run queue and syncs with GitHub while the window is closed, and while it
// serves, the window leaves the timed sync to it. Looked at when the window opens and
// every ten seconds after. On a narrow window only its dot shows; its tooltip and its
// label say the rest.
import { backend } from "./backend.js";

const chip = document.getElementById("daemon-chip");
const word = document.getElementById("daemon-word");
const LOOK_EVERY_MS = 10_000;

/** @param {import("./contract.js").DaemonState} daemon */
function describe(daemon) {
  const synced = daemon.lastSyncAt
    ? `Last sync ${new Date(daemon.lastSyncAt).toLocaleTimeString()}: ${daemon.lastSync ?? ""}.`
    : "No sync yet.";
  const driving = daemon.driving.length
    ? ` Driving run ${daemon.driving.join(", run ")}.`
    : "";
  return `handoff serve (process ${daemon.pid}) runs the queue and syncs with GitHub while this window is closed, and syncs for it while it is open. ${synced}${driving}`;
}

async function look() {
  let daemon = null;
  try {
    daemon = await backend.daemonStatus();
  } catch (error) {
    console.warn("whether a daemon serves this data folder cannot be told", error);
  }
  chip.hidden = !daemon;
  if (!daemon) return;
  word.textContent = daemon.stopping ? "Daemon stopping" : "Daemon on";
  chip.title = describe(daemon);
  chip.setAttribute("aria-label", `${word.textContent}: ${chip.title}`);
}

export function followDaemon() {
  look();
  setInterval(look, LOOK_EVERY_MS);
}
