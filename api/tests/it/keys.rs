//! The keys Handoff keeps, as Settings → Keys and `handoff secrets` both keep them: only
//! the ones a run uses, in the OS keyring, each refused when it is not what its field
//! says.

use handoff_test_support as support;

use handoff::error_code::ErrorCode;
use handoff_api::setup::{key_states, remove_key, set_key};
use handoff_api::AppCore;
use support::secret_service::SecretService;
use support::temp_store;

#[tokio::test]
async fn only_the_keys_a_run_uses_are_kept_and_each_in_its_own_shape() {
    let keyring = SecretService::start();
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address());
    let (dir, store) = temp_store().await;
    let core = AppCore::new(store, dir.path());

    let names: Vec<String> = key_states(&core)
        .await
        .unwrap()
        .into_iter()
        .map(|state| state.name)
        .collect();
    assert_eq!(names, ["anthropic", "claude-plan", "openai", "e2b"]);

    // A provider no agent speaks to would be kept and never read.
    let refused = set_key(&core, "mistral", "key-for-nothing")
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(
        refused.message.contains("unknown key"),
        "{}",
        refused.message
    );

    let refused = set_key(
        &core,
        "anthropic",
        "sk-ant-oat01-AbCdEfGhIjKlMnOpQrStUv_wx-yz0123456789",
    )
    .await
    .unwrap_err();
    assert!(
        refused.message.contains("plan token"),
        "{}",
        refused.message
    );
    let refused = set_key(&core, "claude-plan", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv")
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidInput);

    let states = set_key(&core, "anthropic", "sk-ant-api03-for-the-tests")
        .await
        .unwrap();
    let anthropic = states
        .iter()
        .find(|state| state.name == "anthropic")
        .unwrap();
    assert!(anthropic.set);
    assert_eq!(anthropic.for_host.as_deref(), Some("api.anthropic.com"));
    let states = remove_key(&core, "anthropic").await.unwrap();
    assert!(
        states.iter().all(|state| !state.set),
        "nothing else was kept"
    );
}
