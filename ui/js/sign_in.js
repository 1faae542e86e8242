// @ts-check
// Signing in: GitHub's device flow (the code shown large with Copy, the page opened in
// the browser, waiting with Cancel) or a pasted token; a GitHub Enterprise address for
// either. The token goes to the keyring on the Rust side and never comes back here.

import { backend } from "./backend.js";
import { toast } from "./toasts.js";

const dialog = document.getElementById("sign-in-dialog");
const form = document.getElementById("sign-in-form");
const error = document.getElementById("sign-in-error");
const apiBase = document.getElementById("sign-in-api-base");
const start = document.getElementById("device-start");
const waiting = document.getElementById("device-waiting");
const clientIdBox = document.getElementById("device-client-id-box");
const clientId = document.getElementById("device-client-id");
const codeOutput = document.getElementById("device-code");
const uriHint = document.getElementById("device-uri");

let onSignedIn = null;
let flow = null;

function showError(problem) {
  error.hidden = false;
  error.textContent = problem.message ?? String(problem);
}

function showStart() {
  flow = null;
  start.hidden = false;
  waiting.hidden = true;
}

export function openSignIn(session, whenSignedIn) {
  onSignedIn = whenSignedIn;
  error.hidden = true;
  form.reset();
  showStart();
  clientIdBox.hidden = Boolean(session?.deviceClientIdSet);
  dialog.showModal();
}

function signedIn(status) {
  dialog.close();
  toast(`Signed in as ${status.login}`, { kind: "success" });
  if (status.tokenWarning) toast(`About this token: ${status.tokenWarning}.`, { kind: "warning" });
  onSignedIn?.(status);
}

document.getElementById("device-begin").addEventListener("click", async (event) => {
  const begin = event.currentTarget;
  error.hidden = true;
  begin.disabled = true;
  try {
    flow = await backend.startDeviceSignIn(apiBase.value.trim() || null, clientId.value.trim() || null);
  } catch (problem) {
    begin.disabled = false;
    if (problem.code === "needs_client_id") clientIdBox.hidden = false;
    showError(problem);
    return;
  }
  begin.disabled = false;
  codeOutput.textContent = flow.userCode;
  uriHint.textContent = flow.verificationUri;
  start.hidden = true;
  waiting.hidden = false;
  const mine = flow;
  try {
    const status = await backend.finishDeviceSignIn(mine.flowId);
    signedIn(status);
  } catch (problem) {
    if (flow !== mine) return;
    showStart();
    if (problem.code !== "cancelled") showError(problem);
  }
});

document.getElementById("device-copy").addEventListener("click", async () => {
  const text = codeOutput.textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(codeOutput);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    document.execCommand("copy");
  }
  toast("Code copied");
});

document.getElementById("device-open").addEventListener("click", () => {
  if (flow) backend.openLink(flow.verificationUri).catch(showError);
});

document.getElementById("device-cancel").addEventListener("click", () => {
  if (flow) backend.cancelDeviceSignIn(flow.flowId).catch(showError);
  showStart();
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  try {
    signedIn(await backend.signIn(String(data.get("token") ?? ""), apiBase.value.trim() || null));
  } catch (problem) {
    showError(problem);
  }
});

document.getElementById("sign-in-cancel").addEventListener("click", () => {
  if (flow) backend.cancelDeviceSignIn(flow.flowId).catch((problem) => console.warn("cancelling the sign-in:", problem));
  showStart();
  dialog.close();
});
