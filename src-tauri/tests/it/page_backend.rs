//! `ui/js/backend.js`, the page's one door to the shell, is written from Rust: a call for
//! every `#[tauri::command]` in `src/commands/`, with the argument keys Tauri expects
//! (the parameters' names in camelCase), their types and the return type as JSDoc
//! against `contract.js`, and a listener for every event in `src/page_events.rs`. The
//! test writes the file; when the one in the repository differs, it is rewritten and the
//! test fails, so a stale page boundary never passes. The commands are read as rustfmt
//! writes it; a type the reading does not know fails the test by name.

#[path = "../../src/page_events.rs"]
mod page_events;

use std::collections::BTreeSet;
use std::fmt::Write as _;

include!("../../src/command_names.rs");

macro_rules! command_name_list {
    ($($name:ident),* $(,)?) => {
        vec![$(stringify!($name).to_owned()),*]
    };
}

/// The desktop package's folder.
pub(crate) fn desktop_folder() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// Every command the shell registers, by name.
pub(crate) fn registered_commands() -> Vec<String> {
    with_app_commands!(command_name_list)
}

/// What the file says before the calls: how a call is made and its error read.
const HEADER: &str = r#"// @ts-check
// The one place the page talks to the Rust side. Every call returns data or throws an
// error object {code, message, fix}; the page acts on codes and fixes, never on message
// text.
//
// Written by src-tauri/tests/it/page_backend.rs from src-tauri/src/commands/ and
// src-tauri/src/page_events.rs: do not edit; change those and run the test.

const tauri = window.__TAURI__;

/**
 * @param {unknown} error
 * @returns {import("./contract.js").CodedError}
 */
function asCodedError(error) {
  if (error && typeof error === "object" && typeof error.code === "string") {
    return { fix: null, ...error };
  }
  return { code: "internal", message: String(error), fix: null };
}

/**
 * Calls command `command` of the Rust side (each is named in src-tauri/src/command_names.rs).
 * @template T
 * @param {string} command
 * @param {Record<string, unknown>} [args]
 * @returns {Promise<T>}
 */
async function call(command, args) {
  try {
    return await tauri.core.invoke(command, args);
  } catch (error) {
    throw asCodedError(error);
  }
}

export const backend = {
"#;

/// A command as the page calls it.
struct Command {
    name: String,
    arguments: Vec<Argument>,
    returns: String,
}

struct Argument {
    key: String,
    js_type: String,
    /// A `Channel` the shell sends messages on: the page passes a callback.
    channel: bool,
}

fn camel_case(snake: &str) -> String {
    let mut words = snake.split('_');
    let mut camel = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut letters = word.chars();
        if let Some(first) = letters.next() {
            camel.extend(first.to_uppercase());
            camel.push_str(letters.as_str());
        }
    }
    camel
}

/// `text` split at `separator` where no `<>`, `()` or `[]` is open.
fn split_outside_brackets(text: &str, separator: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            _ => {}
        }
        if c == separator && depth == 0 {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("a part").push(c);
        }
    }
    parts
        .into_iter()
        .map(|part| part.trim().to_owned())
        .filter(|part| !part.is_empty())
        .collect()
}

/// A Rust type, as written in a signature, as JSDoc: numbers, strings, booleans, `null`
/// for `None`, arrays, and the records by their names in `contract.js`.
fn js_type(rust: &str, records: &mut BTreeSet<String>) -> String {
    let rust = rust.trim().trim_start_matches('&').trim();
    if rust == "()" {
        return "void".to_owned();
    }
    let (outer, inner) = match rust.find('<') {
        Some(open) => (
            &rust[..open],
            Some(
                rust[open + 1..]
                    .strip_suffix('>')
                    .expect("a closed type argument"),
            ),
        ),
        None => (rust, None),
    };
    let name = outer.rsplit("::").next().unwrap_or(outer).trim();
    let first_argument = || {
        split_outside_brackets(inner.expect("a type argument"), ',')
            .into_iter()
            .next()
            .expect("a type argument")
    };
    match name {
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" | "isize" | "f32"
        | "f64" => "number".to_owned(),
        "String" | "str" => "string".to_owned(),
        "bool" => "boolean".to_owned(),
        "Answer" | "Result" => js_type(&first_argument(), records),
        "Option" => format!("{} | null", js_type(&first_argument(), records)),
        "Vec" => {
            let element = js_type(&first_argument(), records);
            if element.contains(' ') {
                format!("({element})[]")
            } else {
                format!("{element}[]")
            }
        }
        record => {
            assert!(
                record.chars().all(|c| c.is_alphanumeric() || c == '_'),
                "no JSDoc for the type {rust}"
            );
            records.insert(record.to_owned());
            format!("import(\"./contract.js\").{record}")
        }
    }
}

/// Where the parenthesis that `text` opens with is closed.
fn closing_parenthesis(text: &str) -> usize {
    let mut depth = 0;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    panic!("an unclosed parameter list: {text}")
}

/// What the shell passes a command itself: never an argument from the page.
fn passed_by_the_shell(rust: &str) -> bool {
    let outer = rust.split('<').next().unwrap_or(rust);
    let name = outer.rsplit("::").next().unwrap_or(outer).trim();
    matches!(name, "State" | "AppHandle" | "Window" | "WebviewWindow")
}

/// The `#[tauri::command]`s of `src/commands/`, `mod.rs` first and then its other files
/// by name, each in its order (the files are rustfmt's: a command's signature runs from
/// `fn` to the `{` that opens its body).
fn commands(records: &mut BTreeSet<String>) -> Vec<Command> {
    let folder = desktop_folder().join("src/commands");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .collect();
    files.sort_by_key(|path| (!path.ends_with("mod.rs"), path.clone()));
    let source: String = files
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    let mut commands = Vec::new();
    for marked in source.split("#[tauri::command]").skip(1) {
        let signature_start = marked.find("fn ").expect("a command is a function") + 3;
        let signature = &marked[signature_start..marked.find('{').expect("a body")];
        let open = signature.find('(').expect("parameters");
        let name = signature[..open].trim().to_owned();
        let close = open + closing_parenthesis(&signature[open..]);
        let mut arguments = Vec::new();
        for parameter in split_outside_brackets(&signature[open + 1..close], ',') {
            let (key, rust) = parameter.split_once(':').expect("name: type");
            let rust = rust.trim();
            if passed_by_the_shell(rust) {
                continue;
            }
            let channel = rust.starts_with("Channel<");
            let js_type = if channel {
                let message = &rust["Channel<".len()..rust.len() - 1];
                format!("(message: {}) => void", js_type(message, records))
            } else {
                js_type(rust, records)
            };
            arguments.push(Argument {
                key: camel_case(key.trim()),
                js_type,
                channel,
            });
        }
        let returns = match signature[close + 1..].trim().strip_prefix("->") {
            Some(rust) => js_type(rust, records),
            None => "void".to_owned(),
        };
        commands.push(Command {
            name,
            arguments,
            returns,
        });
    }
    commands
}

/// One command's entry in `backend`.
fn write_call(text: &mut String, command: &Command) {
    let mut doc = String::new();
    for argument in &command.arguments {
        write!(doc, "@param {{{}}} {} ", argument.js_type, argument.key).unwrap();
    }
    write!(doc, "@returns {{Promise<{}>}}", command.returns).unwrap();
    let parameters: Vec<&str> = command.arguments.iter().map(|a| a.key.as_str()).collect();
    let parameters = parameters.join(", ");
    let method = camel_case(&command.name);
    writeln!(text, "  /** {doc} */").unwrap();
    let keys: Vec<String> = command
        .arguments
        .iter()
        .map(|argument| {
            if argument.channel {
                format!("{}: channel", argument.key)
            } else {
                argument.key.clone()
            }
        })
        .collect();
    let payload = if keys.is_empty() {
        String::new()
    } else {
        format!(", {{ {} }}", keys.join(", "))
    };
    match command.arguments.iter().find(|argument| argument.channel) {
        Some(channel) => {
            writeln!(text, "  {method}: ({parameters}) => {{").unwrap();
            writeln!(text, "    const channel = new tauri.core.Channel();").unwrap();
            writeln!(text, "    channel.onmessage = {};", channel.key).unwrap();
            writeln!(text, "    return call(\"{}\"{payload});", command.name).unwrap();
            writeln!(text, "  }},").unwrap();
        }
        None => {
            writeln!(
                text,
                "  {method}: ({parameters}) => call(\"{}\"{payload}),",
                command.name
            )
            .unwrap();
        }
    }
}

/// One event's listener in `backend`: the handler gets what the event carries.
fn write_listener(text: &mut String, event: &page_events::PageEvent) {
    match event.carries {
        Some(record) => {
            writeln!(
                text,
                "  /** @param {{(payload: import(\"./contract.js\").{record}) => void}} handler @returns {{Promise<() => void>}} */"
            )
            .unwrap();
            writeln!(
                text,
                "  {}: (handler) => tauri.event.listen(\"{}\", (event) => handler(event.payload)),",
                event.listener, event.name
            )
            .unwrap();
        }
        None => {
            writeln!(
                text,
                "  /** @param {{() => void}} handler @returns {{Promise<() => void>}} */"
            )
            .unwrap();
            writeln!(
                text,
                "  {}: (handler) => tauri.event.listen(\"{}\", () => handler()),",
                event.listener, event.name
            )
            .unwrap();
        }
    }
}

/// The whole of `backend.js`, and the records it names.
fn backend_js() -> (String, Vec<Command>, BTreeSet<String>) {
    let mut records = BTreeSet::new();
    let commands = commands(&mut records);
    let mut text = HEADER.to_owned();
    for command in &commands {
        write_call(&mut text, command);
    }
    for event in &page_events::PAGE_EVENTS {
        if let Some(record) = event.carries {
            records.insert(record.to_owned());
        }
        write_listener(&mut text, event);
    }
    text.push_str("};\n");
    (text, commands, records)
}

#[test]
fn backend_js_is_written_from_the_commands_and_the_events() {
    let (written, commands, records) = backend_js();

    // Every registered command has its call, and nothing else is called.
    let mut called: Vec<String> = commands
        .iter()
        .map(|command| command.name.clone())
        .collect();
    called.sort();
    let mut registered = registered_commands();
    registered.sort();
    assert_eq!(
        called, registered,
        "src/commands/ against src/command_names.rs"
    );

    // Every record a call takes or returns, and every event carries, is in the contract.
    let contract = std::fs::read_to_string(desktop_folder().join("../ui/js/contract.js")).unwrap();
    for record in &records {
        assert!(
            contract.contains(&format!("}} {record}\n")),
            "{record} is not a typedef of ui/js/contract.js: its Rust type needs ts-rs"
        );
    }

    let path = desktop_folder().join("../ui/js/backend.js");
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    if on_disk != written {
        std::fs::write(&path, &written).unwrap();
        panic!(
            "ui/js/backend.js was stale and has been rewritten from the commands and events: \
             look at the change and commit it"
        );
    }
}

#[test]
fn a_commands_argument_keys_are_its_parameters_in_camel_case() {
    let (written, _, _) = backend_js();
    assert!(
        written.contains(
            "  pushHeldRun: (runId, endSha) => call(\"push_held_run\", { runId, endSha }),"
        ),
        "{written}"
    );
    assert!(
        written.contains("@param {string | null} instructions @returns {Promise<number>}"),
        "an Option is T | null, an i64 a number"
    );
    assert!(
        written.contains("onChunk: channel"),
        "a channel is the page's callback"
    );
    assert_eq!(
        camel_case("open_workspace_pull_request"),
        "openWorkspacePullRequest"
    );
}
