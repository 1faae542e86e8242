#!/bin/sh
# A scripted stand-in for an AI agent, for Handoff's tests. It reads the prompt and
# obeys the lines that begin with "@@", in order:
#   @@write PATH TEXT     make PATH hold TEXT (and a newline)
#   @@append PATH TEXT    add a line to PATH
#   @@commit MESSAGE      commit everything now, as the agent (agents may commit)
#   @@sleep SECONDS       wait
#   @@fail                exit 3 once the other lines are done
#   @@noise LINES         print LINES lines of output, some of them binary
#   @@scan                print the environment, every file of the workspace, the
#                         git config and every process's command line it can see
#   @@usage DOLLARS       report a cost in out/usage.json
#   @@report-usage MODEL IN OUT  print a model call's usage as Claude Code's
#                         stream-json does (an `assistant` event), as it runs
#   @@output TEXT         add TEXT as a line of the stage output (out/output.md)
#   @@echo-inputs         copy every input of the stage into the stage output
#   @@bigoutput CHARS     make the stage output CHARS characters long
#   @@sparse NAME SIZE    make out/NAME a sparse file of SIZE (for example 10G)
#   @@result NAME|passed|EVIDENCE   add a scenario result (passed or failed) to
#                         out/results.json
#   @@check NAME|COMMAND  run COMMAND (a shell line) in the working copy and add a
#                         scenario result: passed when it exits 0, its output as evidence
#   @@lesson PATHS|RULE   propose RULE as a lesson drawn from every correction the
#                         lessons run gave it (in out/lessons.json); PATHS is a
#                         comma-separated list, or - for none
#   @@outfile NAME TEXT   make out/NAME hold TEXT (for output that is not as asked)
#   @@files               print every file of the working copy outside .git, one
#                         line each: "file: PATH"
#   @@whoami              print the user id the agent runs as
#   @@contained           print the user, whether / and /tmp take writes, the
#                         capabilities in effect and the home folder
#   @@reach HOST PORT     try a direct TCP connection (bash) and print whether it opened
#   @@fetch URL           GET an http:// URL through $HTTP_PROXY (bash) and print the answer
#   @@provider            call Anthropic's messages API the way an agent does: at
#                         $ANTHROPIC_BASE_URL, with $ANTHROPIC_API_KEY as x-api-key (bash)
#   @@calls N MODEL [TEXT] make N streaming model calls the same way, for MODEL, with
#                         TEXT as the user's message; print each answer's status, and
#                         stop (exit 4) at the first that is not 200, as an agent does
# A directive written @@STAGE:VERB (for example @@test:result …) applies only in that
# stage, and one written @@runN:VERB only in run N. It ends by writing out/summary.md.
set -u
set -f
prompt="${HANDOFF_PROMPT_FILE:?}"
out="${HANDOFF_OUTPUT_DIR:?}"
workspace="$(dirname "$out")"
echo "scripted agent: $(wc -l < "$prompt") lines of prompt, stage ${HANDOFF_STAGE:-?}"
directives=$(mktemp)
grep '^@@' "$prompt" > "$directives" || true
failing=0
done_list=""
while IFS= read -r line; do
  # shellcheck disable=SC2086
  set -- $line
  verb=$1
  shift
  case "$verb" in
    @@run[0-9]*:*)
      only="${verb#@@run}"; only="${only%%:*}"
      [ "$only" = "${HANDOFF_RUN_ID:-}" ] || continue
      verb="@@${verb#*:}";;
    @@*:*)
      only="${verb#@@}"; only="${only%%:*}"
      [ "$only" = "${HANDOFF_STAGE:-}" ] || continue
      verb="@@${verb#*:}";;
  esac
  case "$verb" in
    @@write)
      file=$1; shift
      mkdir -p "$(dirname "$file")"
      printf '%s\n' "$*" > "$file"
      done_list="$done_list wrote $file;";;
    @@append)
      file=$1; shift
      mkdir -p "$(dirname "$file")"
      printf '%s\n' "$*" >> "$file"
      done_list="$done_list appended to $file;";;
    @@commit)
      git add -A
      git -c user.name="Scripted Agent" -c user.email=agent@example.invalid commit -q -m "$*" \
        && done_list="$done_list committed;";;
    @@sleep)
      sleep "$1";;
    @@fail)
      failing=1;;
    @@noise)
      n=0
      while [ "$n" -lt "$1" ]; do
        echo "noise line $n: lorem ipsum dolor sit amet"
        n=$((n + 1))
      done
      printf 'binary: \000\001\377\376 end\n';;
    @@scan)
      echo "== environment"; env | sort
      echo "== files of the workspace"
      find "$workspace" -path '*/.git/objects' -prune -o -type f -print | sort | while IFS= read -r f; do
        echo "-- $f"; cat "$f" 2>/dev/null; echo
      done
      echo "== git config"; git config --list --show-origin 2>&1
      echo "== command lines"
      for c in /proc/[0-9]*/cmdline; do tr '\000' ' ' < "$c" 2>/dev/null; echo; done
      echo "== scan done";;
    @@files)
      find . -path ./.git -prune -o -type f -print | sed 's|^\./|file: |' | sort;;
    @@whoami)
      echo "scripted agent: uid $(id -u)";;
    @@contained)
      echo "contained: uid $(id -u)"
      if touch /etc/handoff-probe 2>/dev/null; then echo "contained: root writable"; else echo "contained: root read-only"; fi
      if touch /tmp/handoff-probe 2>/dev/null; then echo "contained: tmp writable"; else echo "contained: tmp refused"; fi
      echo "contained: $(grep CapEff /proc/self/status | tr -s ' \t' ' ')"
      echo "contained: home $HOME";;
    @@reach)
      if timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' reach "$1" "$2" 2>/dev/null; then
        echo "reach $1:$2 direct: connected"
      else
        echo "reach $1:$2 direct: refused"
      fi;;
    @@fetch)
      if [ -z "${HTTP_PROXY:-}" ]; then
        echo "fetch $1: no proxy"
      else
        proxy="${HTTP_PROXY#http://}"; proxy="${proxy%%/*}"
        answer=$(timeout 10 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" || exit 1; printf "GET %s HTTP/1.0\r\n\r\n" "$2" >&3; cat <&3' fetch "$proxy" "$1" 2>/dev/null | tr -d '\r' | tr '\n' ' ')
        echo "fetch $1: ${answer:-no answer}"
      fi;;
    @@provider)
      base="${ANTHROPIC_BASE_URL:-}"
      case "$base" in
        http://*)
          rest="${base#http://}"; hostport="${rest%%/*}"; prefix=""
          case "$rest" in */*) prefix="/${rest#*/}";; esac
          body='{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
          answer=$(timeout 20 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" || exit 1; printf "POST %s/v1/messages HTTP/1.0\r\nHost: %s\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s" "$2" "$1" "$3" "${#4}" "$4" >&3; cat <&3' provider "$hostport" "$prefix" "${ANTHROPIC_API_KEY:-}" "$body" 2>/dev/null | tr -d '\r' | tr '\n' ' ')
          echo "provider: ${answer:-no answer}";;
        *) echo "provider: no base address";;
      esac;;
    @@calls)
      count=$1; model=$2; shift 2
      message="${*:-hello}"
      base="${ANTHROPIC_BASE_URL:-}"
      rest="${base#http://}"; hostport="${rest%%/*}"; prefix=""
      case "$rest" in */*) prefix="/${rest#*/}";; esac
      body=$(printf '{"model":"%s","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"%s"}],"tools":[{"name":"Write","description":"write a file","input_schema":{"type":"object"}}]}' "$model" "$message")
      call=1
      while [ "$call" -le "$count" ]; do
        answer=$(timeout 20 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1##*:}" || exit 1; printf "POST %s/v1/messages HTTP/1.0\r\nHost: %s\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s" "$2" "$1" "$3" "${#4}" "$4" >&3; cat <&3' provider "$hostport" "$prefix" "${ANTHROPIC_API_KEY:-}" "$body" 2>/dev/null | tr -d '\r')
        status=$(printf '%s\n' "$answer" | head -n 1 | cut -d' ' -f2)
        echo "model call $call: ${status:-no answer}"
        if [ "$status" != 200 ]; then
          echo "the model refused: $(printf '%s\n' "$answer" | tail -n 1)"
          exit 4
        fi
        call=$((call + 1))
      done;;
    @@usage)
      printf '{"cost_usd": %s, "tokens_in": 1200, "tokens_out": 340}\n' "$1" > "$out/usage.json";;
    @@report-usage)
      reported=$((${reported:-0} + 1))
      printf '{"type":"assistant","message":{"id":"msg_%s","model":"%s","usage":{"input_tokens":%s,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%s}}}\n' "$reported" "$1" "$2" "$3";;
    @@output)
      printf '%s\n' "$*" >> "$out/output.md";;
    @@sparse)
      truncate -s "$2" "$out/$1";;
    @@bigoutput)
      head -c "$1" /dev/zero | tr '\000' 'r' > "$out/output.md";;
    @@result)
      rest="$*"
      name="${rest%%|*}"; rest="${rest#*|}"
      outcome="${rest%%|*}"; evidence="${rest#*|}"
      passed=false; [ "$outcome" = passed ] && passed=true
      printf '{"name": "%s", "passed": %s, "evidence": "%s"}\n' "$name" "$passed" "$evidence" >> "$out/results.jsonl";;
    @@check)
      rest="$*"
      name="${rest%%|*}"; command="${rest#*|}"
      passed=false
      said=$(sh -c "$command" 2>&1) && passed=true
      evidence=$(printf '%s' "$said" | tr '\n"\\' '   ' | cut -c1-300)
      printf '{"name": "%s", "passed": %s, "evidence": "%s"}\n' "$name" "$passed" "$evidence" >> "$out/results.jsonl"
      echo "scripted agent: check $name: $passed ($evidence)";;
    @@lesson)
      rest="$*"
      paths="${rest%%|*}"; rule="${rest#*|}"
      ids=$(grep -o '^## [a-z-]*[0-9][0-9]*' "${HANDOFF_INPUT_DIR:?}/corrections.md" | sed 's/^## //; s/.*/"&"/' | paste -sd, -)
      pathlist=""
      [ "$paths" = "-" ] || pathlist=$(printf '%s\n' "$paths" | tr ',' '\n' | sed 's/.*/"&"/' | paste -sd, -)
      printf '{"rule": "%s", "why": "the owner corrected it", "sources": [%s], "paths": [%s]}\n' "$rule" "$ids" "$pathlist" >> "$out/lessons.jsonl"
      done_list="$done_list proposed a lesson;";;
    @@outfile)
      name=$1; shift
      printf '%s\n' "$*" > "$out/$name";;
    @@echo-inputs)
      set +f
      inputs=$(ls "${HANDOFF_INPUT_DIR:?}")
      set -f
      for name in $inputs; do
        f="$HANDOFF_INPUT_DIR/$name"
        [ -f "$f" ] || continue
        echo "--- input $(basename "$f")" >> "$out/output.md"
        cat "$f" >> "$out/output.md"
        echo >> "$out/output.md"
      done;;
    *)
      echo "scripted agent: unknown directive $verb" >&2;;
  esac
done < "$directives"
rm -f "$directives"
if [ -f "$out/results.jsonl" ]; then
  { printf '{"scenarios": ['; paste -sd, "$out/results.jsonl"; printf ']}\n'; } > "$out/results.json"
  rm -f "$out/results.jsonl"
fi
if [ -f "$out/lessons.jsonl" ]; then
  { printf '{"lessons": ['; paste -sd, "$out/lessons.jsonl"; printf ']}\n'; } > "$out/lessons.json"
  rm -f "$out/lessons.jsonl"
fi
echo "Scripted agent:$done_list" > "$out/summary.md"
echo "scripted agent: done ($done_list )"
if [ "$failing" -eq 1 ]; then
  echo "scripted agent: failing as asked" >&2
  exit 3
fi
exit 0
