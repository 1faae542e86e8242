//! Checks JSON against the schemas of the published OpenAPI descriptions the fakes
//! follow (GitHub's test-support/specs/github/rest-subset.json, a copy of the one beside
//! the product specification, OpenAPI 3.0; E2B's; and a part of OpenAI's, OpenAPI 3.1,
//! whose references are resolved as they are met): enough of JSON Schema for
//! what that description uses — types with `nullable`, `required`, `properties`,
//! `additionalProperties`, `items`, `enum`, `oneOf`/`anyOf`/`allOf`, lengths, bounds,
//! and the `date-time` and `uri` formats.

use serde_json::Value;

/// GitHub's API description (kept in the repository, see test-support/specs/README.md):
/// the subset, with the paths of `rest-additions.json` (forks, a PR's commits, the
/// signed-in account's organizations) added to it.
pub fn github_description() -> Value {
    let read = |path: &str| -> Value {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("cannot read {path}: {error}"));
        serde_json::from_str(&text).expect("the description is JSON")
    };
    let mut description = read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/specs/github/rest-subset.json"
    ));
    let additions = read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/specs/github/rest-additions.json"
    ));
    let paths = description["paths"]
        .as_object_mut()
        .expect("the subset's paths");
    for (path, operations) in additions["paths"]
        .as_object()
        .expect("the additions' paths")
    {
        let into = paths
            .entry(path.clone())
            .or_insert_with(|| Value::Object(Default::default()));
        for (method, operation) in operations.as_object().expect("the operations") {
            into[method] = operation.clone();
        }
    }
    description
}

/// The schema of the `status` answer of `method` on `path_template`.
pub fn response_schema<'a>(
    description: &'a Value,
    method: &str,
    path_template: &str,
    status: u16,
) -> Option<&'a Value> {
    description
        .get("paths")?
        .get(path_template)?
        .get(method.to_ascii_lowercase())?
        .get("responses")?
        .get(status.to_string())?
        .get("content")?
        .get("application/json")?
        .get("schema")
}

/// The path template of the description that `path` (no query) matches.
pub fn path_template(description: &Value, path: &str) -> Option<String> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let paths = description.get("paths")?.as_object()?;
    let mut matches: Vec<&String> = paths
        .keys()
        .filter(|template| {
            let parts: Vec<&str> = template.trim_matches('/').split('/').collect();
            // `{ref}` in git/ref/{ref} spans the rest of the path (heads/main).
            let greedy = parts.last().is_some_and(|p| *p == "{ref}");
            let length_ok = if greedy {
                segments.len() >= parts.len()
            } else {
                segments.len() == parts.len()
            };
            length_ok
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(part, segment)| part.starts_with('{') || part == segment)
        })
        .collect();
    // Prefer the template with the most literal segments (issues/comments/{id} over
    // issues/{issue_number}/comments).
    matches.sort_by_key(|template| {
        std::cmp::Reverse(template.split('/').filter(|p| !p.starts_with('{')).count())
    });
    matches.first().map(|template| template.to_string())
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn check_format(format: &str, text: &str) -> Result<(), String> {
    match format {
        "date-time" => chrono::DateTime::parse_from_rfc3339(text)
            .map(|_| ())
            .map_err(|_| format!("{text:?} is not a date-time")),
        "uri" => {
            if text.contains("://") && !text.contains(char::is_whitespace) {
                Ok(())
            } else {
                Err(format!("{text:?} is not a URI"))
            }
        }
        _ => Ok(()),
    }
}

/// Every way `value` breaks `schema`, each with its JSON path; empty when it conforms.
pub fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    check(None, schema, value, "$", &mut found);
    found
}

/// [`violations`] for a schema whose local `$ref`s ("#/components/schemas/…") point
/// into `root`, resolved as they are met (OpenAI's description refers to itself too
/// much to be written out whole).
pub fn violations_in(root: &Value, schema: &Value, value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    check(Some(root), schema, value, "$", &mut found);
    found
}

fn check(root: Option<&Value>, schema: &Value, value: &Value, at: &str, found: &mut Vec<String>) {
    if let (Some(root), Some(Value::String(reference))) = (root, schema.get("$ref")) {
        let target = reference
            .trim_start_matches("#/")
            .split('/')
            .try_fold(root, |at, part| at.get(part))
            .unwrap_or_else(|| panic!("dangling $ref {reference}"));
        return check(Some(root), target, value, at, found);
    }
    // OpenAPI 3.1 says "may be null" as a `{"type": "null"}` alternative.
    if value.is_null() && schema.get("type").and_then(Value::as_str) == Some("null") {
        return;
    }
    if value.is_null() {
        let nullable = schema
            .get("nullable")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let typed = schema.get("type").is_some();
        let alternatives = ["oneOf", "anyOf"]
            .iter()
            .any(|key| schema.get(key).is_some());
        if nullable || (!typed && !alternatives && schema.get("allOf").is_none()) {
            return;
        }
        if !alternatives {
            found.push(format!("{at}: null where the schema allows no null"));
            return;
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            check(root, part, value, at, found);
        }
    }
    if let Some(one_of) = schema.get("oneOf").and_then(Value::as_array) {
        let passing = one_of
            .iter()
            .filter(|alternative| conforms(root, alternative, value))
            .count();
        if passing != 1 {
            found.push(format!(
                "{at}: matches {passing} of the {} oneOf alternatives, not exactly one",
                one_of.len()
            ));
        }
    }
    if let Some(any_of) = schema.get("anyOf").and_then(Value::as_array) {
        if !any_of
            .iter()
            .any(|alternative| conforms(root, alternative, value))
        {
            found.push(format!("{at}: matches none of the anyOf alternatives"));
        }
    }
    if let Some(expected) = schema.get("type").and_then(Value::as_str) {
        if !type_matches(expected, value) {
            found.push(format!("{at}: expected {expected}, found {value}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !value.is_null() && !allowed.contains(value) {
            found.push(format!("{at}: {value} is not one of {allowed:?}"));
        }
    }
    if let (Some(format), Some(text)) =
        (schema.get("format").and_then(Value::as_str), value.as_str())
    {
        if let Err(problem) = check_format(format, text) {
            found.push(format!("{at}: {problem}"));
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
            if length < min {
                found.push(format!("{at}: shorter than {min}"));
            }
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
            if length > max {
                found.push(format!("{at}: longer than {max}"));
            }
        }
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            if number < min {
                found.push(format!("{at}: below {min}"));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            if number > max {
                found.push(format!("{at}: above {max}"));
            }
        }
    }
    if let Some(object) = value.as_object() {
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    found.push(format!("{at}: lacks required field {name:?}"));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, field) in object {
            let field_at = format!("{at}.{name}");
            match properties.and_then(|properties| properties.get(name)) {
                Some(field_schema) => check(root, field_schema, field, &field_at, found),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        found.push(format!("{field_at}: not allowed by the schema"))
                    }
                    Some(extra) if extra.is_object() => check(root, extra, field, &field_at, found),
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
            if (array.len() as u64) < min {
                found.push(format!("{at}: fewer than {min} items"));
            }
        }
        for (index, item) in array.iter().enumerate() {
            check(root, items, item, &format!("{at}[{index}]"), found);
        }
    }
}

fn conforms(root: Option<&Value>, schema: &Value, value: &Value) -> bool {
    let mut found = Vec::new();
    check(root, schema, value, "$", &mut found);
    found.is_empty()
}

/// `value` with every local `$ref` ("#/components/...") of `root` written out in place
/// (descriptions with references, like E2B's, are checked this way).
pub fn dereference(root: &Value, value: &Value) -> Value {
    fn walk(root: &Value, value: &Value, depth: usize) -> Value {
        if depth > 40 {
            return Value::Null;
        }
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    let target = reference
                        .trim_start_matches("#/")
                        .split('/')
                        .try_fold(root, |at, part| at.get(part));
                    return match target {
                        Some(target) => walk(root, target, depth + 1),
                        None => panic!("dangling $ref {reference}"),
                    };
                }
                Value::Object(
                    object
                        .iter()
                        .map(|(key, inner)| (key.clone(), walk(root, inner, depth + 1)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| walk(root, item, depth + 1))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(root, value, 0)
}

/// The part of OpenAI's API description that the stand-in model server answers with
/// (test-support/specs/openai/openapi-subset.json: the Responses API's streaming events,
/// Chat Completions and the error body, with every schema they refer to).
pub fn openai_description() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/specs/openai/openapi-subset.json"
    );
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("cannot read {path}: {error}"));
    serde_json::from_str(&text).expect("the description is JSON")
}

/// One of E2B's descriptions (`openapi.yml` or `envd.yaml`), as JSON.
pub fn e2b_description(file: &str) -> Value {
    let path = format!("{}/specs/e2b/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {path}: {error}"));
    serde_saphyr::from_str(&text).expect("the description is YAML")
}
