//! Fetching dev container features from a registry that refuses what ghcr.io refuses
//! (the fake's rules are checked here first, so that a fetch passing against it is one
//! that passes against the real registry): an anonymous request gets a 401 and a
//! challenge, a token serves its own repository only, a manifest is served only to a
//! request that accepts its media type, and the storage a blob is redirected to
//! refuses a request that carries the registry's token. Then Handoff's fetch: the
//! feature's layer by its digest, a `.tgz` by its address, and an unknown feature
//! named.

use handoff_test_support as support;

use handoff::domain::dev_container_feature::{feature_source, FeatureSource};
use handoff::sandbox::feature_registry::{
    feature_client, fetch_from_registry, fetch_tarball, OCI_MANIFEST_MEDIA_TYPE,
};
use support::fake_feature_registry::{feature_archive, FakeFeatureRegistry};

const FILES: [(&str, &str, u32); 2] = [
    (
        "devcontainer-feature.json",
        r#"{ "id": "hello", "version": "1.0.0" }"#,
        0o644,
    ),
    ("install.sh", "#!/bin/sh\necho hello\n", 0o755),
];

/// The anonymous pull token the registry's token service gives for `repository`.
async fn anonymous_token(
    http: &reqwest::Client,
    registry: &FakeFeatureRegistry,
    repository: &str,
) -> String {
    let address = format!(
        "http://{0}/token?service={0}&scope=repository:{repository}:pull",
        registry.host()
    );
    let answer: serde_json::Value = http
        .get(address)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_fake_registry_refuses_what_ghcr_refuses() {
    let registry = FakeFeatureRegistry::start().await;
    registry.publish("features/hello", "1", &FILES);
    registry.publish("features/other", "1", &FILES);
    let http = handoff_egress::http_client::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let manifest = format!("http://{}/v2/features/hello/manifests/1", registry.host());

    let anonymous = http.get(&manifest).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let challenge = anonymous.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        challenge.starts_with("Bearer realm=")
            && challenge.contains("scope=\"repository:features/hello:pull\""),
        "{challenge}"
    );
    let body: serde_json::Value = anonymous.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "UNAUTHORIZED");

    let other_token = anonymous_token(&http, &registry, "features/other").await;
    let wrong_repository = http
        .get(&manifest)
        .bearer_auth(&other_token)
        .header("accept", OCI_MANIFEST_MEDIA_TYPE)
        .send()
        .await
        .unwrap();
    assert_eq!(
        wrong_repository.status(),
        401,
        "a token serves its own repository only"
    );

    let token = anonymous_token(&http, &registry, "features/hello").await;
    let token = token.as_str();
    let no_accept = http.get(&manifest).bearer_auth(token).send().await.unwrap();
    assert_eq!(
        no_accept.status(),
        404,
        "an OCI manifest needs its media type accepted"
    );
    let answered = http
        .get(&manifest)
        .bearer_auth(token)
        .header("accept", OCI_MANIFEST_MEDIA_TYPE)
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200);
    assert_eq!(answered.headers()["content-type"], OCI_MANIFEST_MEDIA_TYPE);
    let body: serde_json::Value = answered.json().await.unwrap();
    assert_eq!(body["schemaVersion"], 2);
    let layers = body["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2, "an empty layer, then the feature's");
    let digest = layers[1]["digest"].as_str().unwrap();

    let blob = format!(
        "http://{}/v2/features/hello/blobs/{digest}",
        registry.host()
    );
    let redirected = http.get(&blob).bearer_auth(token).send().await.unwrap();
    assert_eq!(redirected.status(), 307);
    let storage = redirected.headers()["location"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        !storage.contains(&registry.host()),
        "the storage is elsewhere: {storage}"
    );
    let with_token = http.get(&storage).bearer_auth(token).send().await.unwrap();
    assert_eq!(
        with_token.status(),
        400,
        "a signed address takes no second credential"
    );
    let fetched = http.get(&storage).send().await.unwrap();
    assert_eq!(
        fetched.bytes().await.unwrap().to_vec(),
        feature_archive(&FILES)
    );
}

#[tokio::test]
async fn a_feature_is_fetched_by_its_digest_and_an_unknown_one_is_named() {
    let registry = FakeFeatureRegistry::start().await;
    let reference = registry.publish("features/hello", "1", &FILES);
    let http = feature_client().unwrap();
    let FeatureSource::Registry(published) = feature_source(&reference, "").unwrap() else {
        panic!("a registry's feature");
    };
    let files = fetch_from_registry(&http, &published).await.unwrap();
    assert_eq!(files, feature_archive(&FILES));

    let unknown = format!("{}/features/hello:2", registry.host());
    let FeatureSource::Registry(unknown) = feature_source(&unknown, "").unwrap() else {
        panic!("a registry's feature");
    };
    assert_eq!(
        fetch_from_registry(&http, &unknown).await.unwrap_err(),
        format!("{} has no features/hello:2", registry.host())
    );

    let address = registry.offer_tarball("devcontainer-feature-hello.tgz", &FILES);
    assert_eq!(
        fetch_tarball(&http, &address).await.unwrap(),
        feature_archive(&FILES),
        "a .tgz is unpacked"
    );
}
