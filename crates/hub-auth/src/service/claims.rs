//! The claims of an access token in Keycloak's layout, and the roles they carry.
//!
//! Owns: [`AccessClaims`], [`RoleList`], reading roles from every claim Keycloak uses.
//! Must not: sign, verify or decide what a role allows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RoleList {
    #[serde(default)]
    pub roles: Vec<String>,
}

/// Claims of an access token, in Keycloak's layout. Unknown claims of external tokens
/// are ignored; `role`/`roles` (top-level role mappers) are read when present.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccessClaims {
    pub exp: i64,
    #[serde(default)]
    pub iat: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
    pub iss: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typ: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm_access: Option<RoleList>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_access: Option<BTreeMap<String, RoleList>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Value>,
}

impl AccessClaims {
    /// Every role the token carries: realm roles, client roles of every client, and the
    /// top-level `role`/`roles` claims; sorted, without duplicates.
    pub fn all_roles(&self) -> Vec<String> {
        let mut roles: Vec<String> = Vec::new();
        if let Some(r) = &self.realm_access {
            roles.extend(r.roles.iter().cloned());
        }
        for r in self.resource_access.iter().flat_map(|m| m.values()) {
            roles.extend(r.roles.iter().cloned());
        }
        for v in [&self.roles, &self.role].into_iter().flatten() {
            match v {
                Value::String(s) => roles.push(s.clone()),
                Value::Array(a) => {
                    roles.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {}
            }
        }
        roles.sort();
        roles.dedup();
        roles
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles_come_from_every_claim_keycloak_uses() {
        let claims: AccessClaims = serde_json::from_value(json!({
            "exp": 1, "iss": "x", "realm_access": {"roles": ["b", "a"]},
            "resource_access": {"odh-mobility-v2": {"roles": ["BDP_A22"]}, "account": {"roles": ["a"]}},
            "role": "ODH_ROLE_BASIC", "aud": ["account", "x"]
        }))
        .unwrap();
        assert_eq!(claims.all_roles(), ["BDP_A22", "ODH_ROLE_BASIC", "a", "b"]);
    }
}
