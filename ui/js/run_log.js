// @ts-check
// A run's log in a <pre>: every line so far, then each new one as the run writes it,
// kept scrolled to the end unless the reader scrolled up.

import { backend } from "./backend.js";
import { el } from "./dom.js";
import { errorToast } from "./toasts.js";

export function followLogInto(runId, log) {
  backend
    .followRunLog(runId, (chunk) => {
      const line = el("span", { class: `log-${chunk.stream}`, text: chunk.stream === "handoff" ? `» ${chunk.text}` : chunk.text });
      const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
      log.append(line);
      if (atBottom) log.scrollTop = log.scrollHeight;
    })
    .catch(errorToast);
}
