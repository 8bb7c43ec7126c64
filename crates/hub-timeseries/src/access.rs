//! Closed-data rules: which measurement rules apply to a caller.

use hub_query::timeseries::AccessRule;

use crate::{Roles, TimeseriesConfig};

/// `None` = sees everything (admin); otherwise open rules plus the caller's role rules.
pub fn rules_for(config: &TimeseriesConfig, roles: Option<&Roles>) -> Option<Vec<AccessRule>> {
    let roles = roles.cloned().unwrap_or_default();
    if roles.has(&config.admin_role) {
        return None;
    }
    let mut rules = config.open_rules.clone();
    for (role, extra) in &config.role_rules {
        if roles.has(role) {
            rules.extend(extra.iter().cloned());
        }
    }
    Some(rules)
}
