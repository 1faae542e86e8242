// The one place the page talks to the Rust side. Every call returns data or throws an
// error object {code, message}; the page acts on codes, never on message text.

const tauri = window.__TAURI__;

function asCodedError(error) {
  if (error && typeof error === "object" && typeof error.code === "string") {
    return error;
  }
  return { code: "internal", message: String(error) };
}

async function call(command, args) {
  try {
    return await tauri.core.invoke(command, args);
  } catch (error) {
    throw asCodedError(error);
  }
}

export const backend = {
  appInfo: () => call("app_info"),
  dashboard: (query) => call("dashboard", { query }),
  repos: () => call("repos"),
  openPullRequest: (feedbackId) => call("open_pull_request", { feedbackId }),
  onMirrorChanged: (handler) => tauri.event.listen("mirror-changed", handler),
};
