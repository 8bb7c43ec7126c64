//! What roles mean for the Content API: who reads closed data, who writes.
//!
//! - Closed data (accommodation rooms and availability): role `DataReader` (all closed
//!   data), `AccoReader` (accommodation data), or `{EntityType}_Read` (the reference's
//!   permission claim, also with a condition suffix such as `Accommodation_Read_accessrole=IDM`).
//! - Writes: `{EntityType}_Create`, `{EntityType}_Update`, `{EntityType}_Delete`
//!   (case-insensitive; the reference's form). No token → 401; a token without the role → 403.
//!
//! The role meanings themselves are `hub_model::principal` (shared with the Time Series
//! API); this module turns them into the 401/403 errors of the auth layer.

use crate::error::AuthError;
use crate::middleware::Principal;

pub use hub_model::principal::CLOSED_DATA_ROLES;
use hub_model::Closed;

/// May this caller see the closed parts of `entity` documents?
pub fn can_read_closed(principal: Option<&Principal>, entity: &str) -> bool {
    hub_model::principal::can_read(principal, Closed::Content { entity })
}

/// A write action on the Content API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteAction {
    Create,
    Update,
    Delete,
}

impl WriteAction {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteAction::Create => "Create",
            WriteAction::Update => "Update",
            WriteAction::Delete => "Delete",
        }
    }
}

/// The caller, if it holds a token (401 otherwise).
pub fn require_token<'a>(
    principal: Option<&'a Principal>,
    what: &str,
) -> Result<&'a Principal, AuthError> {
    principal.ok_or_else(|| {
        AuthError::MissingToken(format!(
            "{what} needs a bearer token (Authorization: Bearer …)"
        ))
    })
}

/// The caller, if it may perform `action` on `entity` (401 without token, 403 without role).
pub fn require_write<'a>(
    principal: Option<&'a Principal>,
    entity: &str,
    action: WriteAction,
) -> Result<&'a Principal, AuthError> {
    let p = require_token(
        principal,
        &format!("{} on {entity}", action.as_str().to_lowercase()),
    )?;
    if p.has_permission(entity, action.as_str()) {
        Ok(p)
    } else {
        Err(AuthError::Forbidden(format!(
            "this token lacks the role {entity}_{}",
            action.as_str()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(roles: &[&str]) -> Principal {
        Principal {
            subject: "s".into(),
            username: None,
            roles: roles
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .into(),
            client: None,
        }
    }

    #[test]
    fn roles_open_closed_data_and_writes() {
        assert!(!can_read_closed(None, "Accommodation"));
        assert!(!can_read_closed(Some(&who(&[])), "Accommodation"));
        assert!(can_read_closed(
            Some(&who(&["datareader"])),
            "Accommodation"
        ));
        assert!(can_read_closed(
            Some(&who(&["Accommodation_Read_accessrole=IDM"])),
            "Accommodation"
        ));
        assert!(!can_read_closed(
            Some(&who(&["AccommodationX_Read"])),
            "Accommodation"
        ));
        assert!(require_write(Some(&who(&["event_create"])), "Event", WriteAction::Create).is_ok());
        assert!(matches!(
            require_write(Some(&who(&["Event_Create"])), "Event", WriteAction::Delete),
            Err(AuthError::Forbidden(_))
        ));
        assert!(matches!(
            require_write(
                Some(&who(&["EventShort_Create"])),
                "Event",
                WriteAction::Create
            ),
            Err(AuthError::Forbidden(_))
        ));
        assert!(matches!(
            require_write(None, "Event", WriteAction::Create),
            Err(AuthError::MissingToken(_))
        ));
    }
}
