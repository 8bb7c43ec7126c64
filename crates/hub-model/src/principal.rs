//! The caller and what its roles open: one [`Principal`] that the auth layer puts into
//! the request extensions and every API reads (no extension = anonymous), and the pure
//! role checks both the Content API and the Time Series API ask.
//!
//! Owns role *meanings* (which role opens which closed data, which grants a write).
//! Must not: verify tokens (that is `hub-auth`), or know a dataset's rows (the Time
//! Series API turns the roles it is told about into access rules itself).

use std::sync::Arc;

/// Roles that open every closed dataset of the Content API.
pub const CLOSED_DATA_ROLES: &[&str] = &["DataReader", "AccoReader"];

/// Who is calling: the token's subject, its roles and the client it was issued to.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    pub subject: String,
    /// `preferred_username`, when the token has one.
    pub username: Option<String>,
    pub roles: Arc<[String]>,
    /// `azp`: the client the token was issued to.
    pub client: Option<String>,
}

/// Closed data a caller may or may not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed<'a> {
    /// The closed parts of Content API documents of an entity type (e.g. `Accommodation`).
    Content { entity: &'a str },
    /// Time series opened by a role of the Time Series API configuration (`A22`, `ADMIN`).
    Series { role: &'a str },
}

impl Principal {
    /// A principal with just a subject and roles (tools and tests).
    pub fn with_roles(subject: &str, roles: &[&str]) -> Self {
        Principal {
            subject: subject.to_string(),
            username: None,
            roles: roles.iter().map(|r| r.to_string()).collect(),
            client: None,
        }
    }

    /// Role check, case-insensitive (role names travel through many systems).
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(role))
    }

    /// `{entity}_{action}` in the reference's permission form: case-insensitive, and a
    /// condition suffix (`Accommodation_Read_accessrole=IDM`) still grants it.
    pub fn has_permission(&self, entity: &str, action: &str) -> bool {
        let wanted = format!("{entity}_{action}");
        self.roles.iter().any(|r| {
            r.len() >= wanted.len()
                && r.is_char_boundary(wanted.len())
                && r[..wanted.len()].eq_ignore_ascii_case(&wanted)
                && (r.len() == wanted.len() || r.as_bytes()[wanted.len()] == b'_')
        })
    }

    /// A Time Series API role: exact name, or with the reference's `BDP_` prefix
    /// (`BDP_ADMIN` = `ADMIN`). Case-sensitive, as the reference is.
    pub fn has_series_role(&self, role: &str) -> bool {
        self.roles
            .iter()
            .any(|r| r == role || r.strip_prefix("BDP_") == Some(role))
    }

    /// May this caller read the closed data?
    pub fn can_read(&self, closed: Closed<'_>) -> bool {
        match closed {
            Closed::Content { entity } => {
                CLOSED_DATA_ROLES.iter().any(|r| self.has_role(r))
                    || self.has_permission(entity, "Read")
            }
            Closed::Series { role } => self.has_series_role(role),
        }
    }
}

/// [`Principal::can_read`] for a caller that may be anonymous (who reads nothing closed).
pub fn can_read(principal: Option<&Principal>, closed: Closed<'_>) -> bool {
    principal.is_some_and(|p| p.can_read(closed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_open_closed_data() {
        let content = |entity| Closed::Content { entity };
        let series = |role| Closed::Series { role };
        // (roles, closed data, expected); `None` roles = anonymous.
        let cases: &[(Option<&[&str]>, Closed, bool)] = &[
            (None, content("Accommodation"), false),
            (Some(&[]), content("Accommodation"), false),
            (Some(&["datareader"]), content("Accommodation"), true),
            (Some(&["AccoReader"]), content("Event"), true),
            (
                Some(&["Accommodation_Read_accessrole=IDM"]),
                content("Accommodation"),
                true,
            ),
            (
                Some(&["accommodation_read"]),
                content("Accommodation"),
                true,
            ),
            (
                Some(&["AccommodationX_Read"]),
                content("Accommodation"),
                false,
            ),
            (Some(&["Event_Read"]), content("Accommodation"), false),
            (None, series("A22"), false),
            (Some(&["A22"]), series("A22"), true),
            (Some(&["BDP_A22"]), series("A22"), true),
            (Some(&["a22"]), series("A22"), false),
            (Some(&["METEO"]), series("A22"), false),
        ];
        for (roles, closed, expected) in cases {
            let principal = roles.map(|r| Principal::with_roles("s", r));
            assert_eq!(
                can_read(principal.as_ref(), *closed),
                *expected,
                "{roles:?} {closed:?}"
            );
        }
    }

    #[test]
    fn permissions_need_the_whole_entity_name() {
        let cases: &[(&str, &str, &str, bool)] = &[
            ("event_create", "Event", "Create", true),
            ("Event_Create", "Event", "Delete", false),
            ("EventShort_Create", "Event", "Create", false),
            ("Event_Create_x=1", "Event", "Create", true),
            ("Évent_Create", "Event", "Create", false),
        ];
        for (role, entity, action, expected) in cases {
            let p = Principal::with_roles("s", &[role]);
            assert_eq!(p.has_permission(entity, action), *expected, "{role}");
        }
    }
}
