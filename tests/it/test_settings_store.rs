//! A repository's test-only settings as the store keeps them: set, replaced by name,
//! listed in name order, removed, and no more than a repository may have.

use handoff_test_support as support;

use handoff::domain::test_setting::{TestSetting, TestSettingError, MOST_TEST_SETTINGS};
use handoff::domain::RepoId;
use handoff::store::{SetTestSettingError, Store};
use support::seed;

async fn store_with_repo() -> (tempfile::TempDir, Store, RepoId) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let repo = seed::add_repo(&store, "octocat/hello-world").await;
    (dir, store, repo.id)
}

fn setting(name: &str, value: &str) -> TestSetting {
    TestSetting {
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

#[tokio::test]
async fn a_setting_is_set_replaced_listed_by_name_and_removed() {
    let (_dir, store, repo) = store_with_repo().await;
    let records = store.test_settings();
    records
        .set_test_setting(repo, &setting("REDIS_URL", "redis://cache"))
        .await
        .unwrap();
    records
        .set_test_setting(repo, &setting("DATABASE_URL", "postgres://db/a"))
        .await
        .unwrap();
    records
        .set_test_setting(repo, &setting("DATABASE_URL", "postgres://db/b"))
        .await
        .unwrap();
    assert_eq!(
        records.test_settings(repo).await.unwrap(),
        [
            setting("DATABASE_URL", "postgres://db/b"),
            setting("REDIS_URL", "redis://cache")
        ]
    );
    assert!(records
        .remove_test_setting(repo, "REDIS_URL")
        .await
        .unwrap());
    assert!(!records
        .remove_test_setting(repo, "REDIS_URL")
        .await
        .unwrap());
    assert_eq!(records.test_settings(repo).await.unwrap().len(), 1);
}

#[tokio::test]
async fn one_more_than_the_most_is_refused_and_a_replacement_is_not() {
    let (_dir, store, repo) = store_with_repo().await;
    let records = store.test_settings();
    for number in 0..MOST_TEST_SETTINGS {
        records
            .set_test_setting(repo, &setting(&format!("SETTING_{number}"), "x"))
            .await
            .unwrap();
    }
    let refused = records
        .set_test_setting(repo, &setting("ONE_MORE", "x"))
        .await;
    assert!(matches!(
        refused,
        Err(SetTestSettingError::Refused(TestSettingError::TooMany))
    ));
    records
        .set_test_setting(repo, &setting("SETTING_0", "y"))
        .await
        .unwrap();
    assert_eq!(
        records.test_settings(repo).await.unwrap().len(),
        MOST_TEST_SETTINGS
    );
}
