//! The forwarder's keys: placeholders, the sandbox's environment, and keys past their
//! time.

use super::*;

fn openai_key() -> ForwardedKey {
    ForwardedKey::new(
        "OPENAI_API_KEY",
        &["OPENAI_BASE_URL", "OPENAI_API_BASE"],
        "/v1",
        "Authorization",
        "Bearer ",
        "api.openai.com",
        "https://api.openai.com/",
        ModelEndpoint::list(&[("POST", "/v1/responses")]),
        Secret::new("sk-real-key"),
    )
}

#[test]
fn the_sandbox_gets_the_placeholder_and_the_endpoint_never_the_key() {
    let key = openai_key();
    let environment = key.sandbox_environment(Some("http://172.17.0.1:4000"));
    assert_eq!(
        environment,
        vec![
            ("OPENAI_API_KEY".to_owned(), key.placeholder.clone()),
            (
                "OPENAI_BASE_URL".to_owned(),
                "http://172.17.0.1:4000/v1".to_owned()
            ),
            (
                "OPENAI_API_BASE".to_owned(),
                "http://172.17.0.1:4000/v1".to_owned()
            ),
        ]
    );
    assert!(environment
        .iter()
        .all(|(_, value)| !value.contains("sk-real-key")));
    assert_eq!(key.upstream, "https://api.openai.com");
    assert_eq!(key.header, "authorization");
    assert_eq!(key.header_value(), "Bearer sk-real-key");
}

#[test]
fn each_run_has_a_placeholder_of_its_own() {
    assert_ne!(openai_key().placeholder, openai_key().placeholder);
}

#[test]
fn only_the_runs_placeholder_in_the_key_header_is_accepted() {
    let key = openai_key();
    let mut headers = HeaderMap::new();
    assert!(!key.carries_placeholder(&headers));
    headers.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {}", key.placeholder)).unwrap(),
    );
    assert!(key.carries_placeholder(&headers));
    headers.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {}", openai_key().placeholder)).unwrap(),
    );
    assert!(
        !key.carries_placeholder(&headers),
        "another run's placeholder"
    );
    headers.insert(
        "authorization",
        HeaderValue::from_static("Bearer sk-real-key"),
    );
    assert!(!key.carries_placeholder(&headers));
}

#[test]
fn a_key_past_its_time_is_not_forwarded_and_is_forgotten() {
    let table = ForwardingTable::default();
    let key = openai_key();
    let mut headers = HeaderMap::new();
    headers.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {}", key.placeholder)).unwrap(),
    );
    table.add_until(key.clone(), Some(Instant::now() - Duration::from_secs(1)));
    assert!(table.key_for(&headers).is_none());
    assert_eq!(table.forget_expired(), 1);
    assert!(table.is_empty());
    table.add_until(key, Some(Instant::now() + Duration::from_secs(60)));
    assert!(table.key_for(&headers).is_some());
    assert_eq!(table.forget_expired(), 0);
}
