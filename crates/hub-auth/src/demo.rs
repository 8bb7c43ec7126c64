//! The demo principals: a user that reads closed data and a client that writes. They
//! exist for demonstration only; the server warns about them at start.

use hub_store::auth::{AuthRepo, ClientRecord, UserRecord};

use crate::secrets;

pub const DEMO_USER: &str = "demo";
pub const DEMO_PASSWORD: &str = "demo";
pub const DEMO_WRITER_CLIENT: &str = "hub-demo-writer";
pub const DEMO_WRITER_SECRET: &str = "hub-demo-writer-secret-for-demonstration-only";

/// Roles of the demo user: closed content data and closed time series.
pub const DEMO_USER_ROLES: &[&str] = &["DataReader", "AccoReader", "BDP_A22"];

/// The demo writer's roles: create, update, delete on the given entity names, and the
/// Time Series writer role.
pub fn writer_roles(entities: &[&str]) -> Vec<String> {
    let mut roles: Vec<String> = entities
        .iter()
        .flat_map(|e| ["Create", "Update", "Delete"].map(|a| format!("{e}_{a}")))
        .collect();
    roles.push("WRITER".into());
    roles
}

/// Creates (or resets) the demo user and writer client. Blocking (Argon2 hashing).
pub fn create_demo_principals(
    repo: &dyn AuthRepo,
    entities: &[&str],
) -> Result<(), hub_store::StoreError> {
    let now = crate::clock::Clock::now(&crate::clock::SystemClock);
    let user = UserRecord {
        id: uuid::Uuid::new_v4().to_string(),
        username: DEMO_USER.into(),
        password_hash: secrets::hash_password(DEMO_PASSWORD),
        roles: DEMO_USER_ROLES.iter().map(|r| r.to_string()).collect(),
        created_at: now,
    };
    let client = ClientRecord {
        client_id: DEMO_WRITER_CLIENT.into(),
        secret_hash: secrets::sha256_hex(DEMO_WRITER_SECRET),
        description: "demo writer (demonstration only)".into(),
        roles: writer_roles(entities),
        created_at: now,
    };
    repo.upsert_blocking(&[user], &[client])
}

/// Entity types the demo writer may create, update and delete.
pub const DEMO_WRITABLE: [&str; 6] = [
    "Accommodation",
    "AccommodationRoom",
    "HubActivityPoi",
    "Event",
    "Article",
    "Announcement",
];

#[cfg(test)]
mod tests {
    use super::*;
    use hub_store::auth::RoleChange;
    use hub_store::Store;

    /// Reloading the demo principals (each `--demo` start does) keeps the user's subject
    /// id and resets roles; on either backend, and from inside a runtime as the server does.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reloading_the_demo_principals_keeps_the_subject_id() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Store::open_for_tests(dir.path()).unwrap().auth();
        create_demo_principals(&*repo, &DEMO_WRITABLE).unwrap();
        let first = repo.user(DEMO_USER).await.unwrap().unwrap();
        assert!(repo
            .user_roles(DEMO_USER, vec!["Extra".into()], RoleChange::Grant)
            .await
            .unwrap());
        create_demo_principals(&*repo, &["Event"]).unwrap();
        let again = repo.user(DEMO_USER).await.unwrap().unwrap();
        assert_eq!(again.id, first.id);
        let mut roles: Vec<String> = DEMO_USER_ROLES.iter().map(|r| r.to_string()).collect();
        roles.sort();
        assert_eq!(again.roles, roles);
        let client = repo.client(DEMO_WRITER_CLIENT).await.unwrap().unwrap();
        let mut writer = writer_roles(&["Event"]);
        writer.sort();
        assert_eq!(client.roles, writer);
        assert_eq!(repo.clients().await.unwrap().len(), 1);
        assert_eq!(repo.users().await.unwrap().len(), 1);
    }
}
