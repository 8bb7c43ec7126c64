//! Storage behaviour of the token service's tables through [`AuthRepo`], on the backend
//! `Store::open_for_tests` picks (SQLite, or PostgreSQL with `HUB_TEST_DATABASE`).

use super::*;
use crate::Store;

fn refresh(hash: &str, family: &str, now: i64) -> RefreshRecord {
    RefreshRecord {
        token_hash: hash.into(),
        family: family.into(),
        username: "u".into(),
        client_id: "c".into(),
        scope: "openid".into(),
        issued_at: now,
        expires_at: now + 100,
        session_expires_at: now + 1000,
    }
}

fn present(token_hash: String, client_id: String, now: i64) -> RefreshPresentation {
    RefreshPresentation {
        token_hash,
        client_id,
        now,
    }
}

#[tokio::test]
async fn refresh_tokens_rotate_once_and_reuse_revokes_the_family() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap().auth();
    store.refresh_insert(refresh("h1", "f", 0)).await.unwrap();
    let out = store
        .refresh_rotate(
            present("h1".into(), "c".into(), 10),
            Box::new(|_| refresh("h2", "f", 10)),
        )
        .await
        .unwrap();
    assert!(matches!(out, RefreshOutcome::Rotated(ref r) if r.token_hash == "h2"));
    assert_eq!(
        store
            .refresh_rotate(
                present("h1".into(), "c".into(), 11),
                Box::new(|_| refresh("h3", "f", 11))
            )
            .await
            .unwrap(),
        RefreshOutcome::Reused
    );
    // The successor was revoked with its family.
    assert_eq!(
        store
            .refresh_rotate(
                present("h2".into(), "c".into(), 12),
                Box::new(|_| refresh("h4", "f", 12))
            )
            .await
            .unwrap(),
        RefreshOutcome::Invalid
    );
    assert_eq!(
        store
            .refresh_rotate(
                present("nope".into(), "c".into(), 12),
                Box::new(|_| refresh("h5", "f", 12))
            )
            .await
            .unwrap(),
        RefreshOutcome::Invalid
    );
}

#[tokio::test]
async fn users_roles_and_duplicate_names() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap().auth();
    let user = UserRecord {
        id: "1".into(),
        username: "ann".into(),
        password_hash: "h".into(),
        roles: vec!["B".into(), "A".into()],
        created_at: 0,
    };
    store.user_add(user.clone()).await.unwrap();
    assert!(matches!(
        store.user_add(user).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(store
        .user_roles("ann", vec!["C".into()], RoleChange::Grant)
        .await
        .unwrap());
    assert!(store
        .user_roles("ann", vec!["A".into()], RoleChange::Revoke)
        .await
        .unwrap());
    assert_eq!(store.user("ann").await.unwrap().unwrap().roles, ["B", "C"]);
    assert!(store.user_remove("ann").await.unwrap());
    assert!(store.user("ann").await.unwrap().is_none());
}

/// Two stores on one PostgreSQL database stand for two `hub serve` processes; each
/// round presents one refresh token through both at once.
#[test]
fn concurrent_rotations_of_one_token_rotate_once_and_revoke_the_family() {
    let admin = match std::env::var("HUB_TEST_DATABASE") {
        Ok(url) if !url.trim().is_empty() => url.trim().to_string(),
        _ => {
            println!("skipped: racing refresh rotations needs PostgreSQL (set HUB_TEST_DATABASE)");
            return;
        }
    };
    let name = format!("hub_test_race_{}", std::process::id());
    let database = crate::postgres::ThrowawayDatabase::create(&admin, &name).unwrap();
    let url = database.url();
    let a = Store::open_postgres(url, None).unwrap().auth();
    let b = Store::open_postgres(url, None).unwrap().auth();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for round in 0..25 {
            let family = format!("f{round}");
            let first = format!("{family}-h1");
            a.refresh_insert(refresh(&first, &family, 0)).await.unwrap();
            let (next_a, next_b) = (format!("{family}-a"), format!("{family}-b"));
            let fam_a = family.clone();
            let fam_b = family.clone();
            let ra = a.refresh_rotate(
                present(first.clone(), "c".into(), 10),
                Box::new(move |_| refresh(&next_a, &fam_a, 10)),
            );
            let rb = b.refresh_rotate(
                present(first.clone(), "c".into(), 10),
                Box::new(move |_| refresh(&next_b, &fam_b, 10)),
            );
            // Each store runs its half on its own runtime and connection.
            let (ra, rb) = tokio::join!(ra, rb);
            let outcomes = [ra.unwrap(), rb.unwrap()];
            let rotated: Vec<&RefreshRecord> = outcomes
                .iter()
                .filter_map(|o| match o {
                    RefreshOutcome::Rotated(r) => Some(r),
                    _ => None,
                })
                .collect();
            assert_eq!(
                rotated.len(),
                1,
                "round {round}: exactly one rotation succeeds: {outcomes:?}"
            );
            assert!(
                outcomes.contains(&RefreshOutcome::Reused),
                "round {round}: the other is reuse: {outcomes:?}"
            );
            // Reuse revoked the whole family, the successor just issued included.
            let successor = rotated[0].token_hash.clone();
            let again = a
                .refresh_rotate(
                    present(successor, "c".into(), 11),
                    Box::new(move |_| refresh("never", "f", 11)),
                )
                .await
                .unwrap();
            assert_eq!(
                again,
                RefreshOutcome::Invalid,
                "round {round}: the successor is revoked"
            );

            // A used token presented while its successor rotates: the reuse revokes
            // the family, including whatever that rotation issues.
            let family = format!("g{round}");
            let (h0, h1) = (format!("{family}-h0"), format!("{family}-h1"));
            a.refresh_insert(refresh(&h0, &family, 0)).await.unwrap();
            let (h1_next, fam) = (h1.clone(), family.clone());
            let out = a
                .refresh_rotate(
                    present(h0.clone(), "c".into(), 5),
                    Box::new(move |_| refresh(&h1_next, &fam, 5)),
                )
                .await
                .unwrap();
            assert!(matches!(out, RefreshOutcome::Rotated(_)));
            let (h2, fam) = (format!("{family}-h2"), family.clone());
            let (h0_next, fam0) = (format!("{family}-x"), family.clone());
            let (rotation, reuse) = tokio::join!(
                a.refresh_rotate(
                    present(h1.clone(), "c".into(), 10),
                    Box::new(move |_| refresh(&h2, &fam, 10))
                ),
                b.refresh_rotate(
                    present(h0.clone(), "c".into(), 10),
                    Box::new(move |_| refresh(&h0_next, &fam0, 10))
                ),
            );
            assert_eq!(reuse.unwrap(), RefreshOutcome::Reused, "round {round}");
            match rotation.unwrap() {
                RefreshOutcome::Rotated(r) => {
                    let again = a
                        .refresh_rotate(
                            present(r.token_hash, "c".into(), 11),
                            Box::new(move |_| refresh("never", "g", 11)),
                        )
                        .await
                        .unwrap();
                    assert_eq!(
                        again,
                        RefreshOutcome::Invalid,
                        "round {round}: the concurrent successor is revoked"
                    );
                }
                other => assert_eq!(other, RefreshOutcome::Invalid, "round {round}"),
            }
        }
    });
    drop((a, b));
    rt.shutdown_background();
}
