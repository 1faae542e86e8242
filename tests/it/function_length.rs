//! No function of the product grows past eighty lines. A long function is split at its
//! own comments into functions named after what each part does.
//!
//! Counted: every `fn` of the Rust sources of the programs and their libraries (not
//! their `#[cfg(test)]` modules, not the tests) and every `function` of the page's
//! modules, from the line that names it to its closing brace.

use std::path::{Path, PathBuf};

const LONGEST: usize = 80;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files counted, each with whether it is Rust (else the page's JavaScript).
fn counted_files() -> Vec<(PathBuf, bool)> {
    let mut folders = vec![
        workspace().join("src"),
        workspace().join("api/src"),
        workspace().join("cli/src"),
        workspace().join("src-tauri/src"),
        workspace().join("ui/js"),
    ];
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        folders.push(entry.unwrap().path().join("src"));
    }
    let mut files = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push((path, true));
            } else if path.extension().is_some_and(|extension| extension == "js")
                && path.file_name().is_some_and(|name| name != "contract.js")
            {
                files.push((path, false));
            }
        }
    }
    files
}

/// The name of the function a line starts, if it starts one.
fn function_named(line: &str, rust: bool) -> Option<String> {
    let mut rest = line.trim_start();
    let prefixes: &[&str] = if rust {
        &[
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "async ",
            "const ",
            "unsafe ",
        ]
    } else {
        &["export ", "async "]
    };
    loop {
        let before = rest;
        for prefix in prefixes {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        if rest == before {
            break;
        }
    }
    let rest = rest.strip_prefix(if rust { "fn " } else { "function " })?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The braces of `line` that are code: not in a string, a character or a comment.
/// `quoted` is the quote of a string still open at the end of the line before (a Rust
/// string may span lines, a JavaScript template too).
fn code_braces(line: &str, rust: bool, quoted: &mut Option<char>) -> Vec<char> {
    let characters: Vec<char> = line.chars().collect();
    let mut braces = Vec::new();
    let mut at = 0;
    while at < characters.len() {
        let c = characters[at];
        if let Some(quote) = *quoted {
            if c == '\\' {
                at += 1;
            } else if c == quote {
                *quoted = None;
            }
        } else if c == '/' && characters.get(at + 1) == Some(&'/') {
            break;
        } else if c == '"' || (!rust && (c == '`' || c == '\'')) {
            *quoted = Some(c);
        } else if c == '\'' {
            // A character ('{', '\n', '\u{7f}'), not a lifetime ('a).
            let close = if characters.get(at + 1) == Some(&'\\') {
                (at + 3..characters.len().min(at + 12)).find(|&end| characters[end] == '\'')
            } else {
                (characters.get(at + 2) == Some(&'\'')).then_some(at + 2)
            };
            if let Some(close) = close {
                at = close;
            }
        } else if c == '{' || c == '}' {
            braces.push(c);
        }
        at += 1;
    }
    // A JavaScript quote closes on its line; only a template or a Rust string goes on.
    if !rust && *quoted != Some('`') {
        *quoted = None;
    }
    braces
}

/// The functions of one file over the limit, as `file::name` with their lengths.
fn long_functions_of(path: &Path, rust: bool) -> Vec<(String, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let relative = path
        .strip_prefix(workspace())
        .unwrap_or(path)
        .display()
        .to_string();
    let mut found = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        if rust && lines[index].trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let Some(name) = function_named(lines[index], rust) else {
            index += 1;
            continue;
        };
        let mut depth = 0i32;
        let mut opened = false;
        let mut end = index;
        let mut quoted = None;
        while end < lines.len() {
            for brace in code_braces(lines[end], rust, &mut quoted) {
                if brace == '{' {
                    depth += 1;
                    opened = true;
                } else {
                    depth -= 1;
                }
            }
            if (opened && depth <= 0) || (!opened && lines[end].trim_end().ends_with(';')) {
                break;
            }
            end += 1;
        }
        let length = end - index + 1;
        if opened && length > LONGEST {
            found.push((format!("{relative}::{name}"), length));
        }
        index = if opened { end + 1 } else { index + 1 };
    }
    found
}

fn long_functions() -> Vec<(String, usize)> {
    let mut found: Vec<(String, usize)> = counted_files()
        .iter()
        .flat_map(|(path, rust)| long_functions_of(path, *rust))
        .collect();
    found.sort();
    found
}

#[test]
fn no_function_grows_past_eighty_lines() {
    let grown = long_functions();
    assert!(
        grown.is_empty(),
        "over {LONGEST} lines: {grown:?}; split each at its own comments into functions named \
         after what each part does"
    );
}

#[test]
fn a_long_function_is_found_by_its_name_and_length() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("long.rs");
    let body: String = (0..90)
        .map(|line| format!("    let _{line} = {line};\n"))
        .collect();
    std::fs::write(
        &path,
        format!("pub(crate) async fn long_one() {{\n{body}}}\nfn short() {{}}\n"),
    )
    .unwrap();
    let found = long_functions_of(&path, true);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.ends_with("long.rs::long_one"), "{found:?}");
    assert_eq!(found[0].1, 92);
}
