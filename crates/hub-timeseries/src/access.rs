//! Closed-data rules: which measurement rules apply to a caller.

use hub_model::{Closed, Principal};
use hub_query::timeseries::AccessRule;

use crate::TimeseriesConfig;

/// `None` = sees everything (admin); otherwise open rules plus the caller's role rules.
pub fn rules_for(
    config: &TimeseriesConfig,
    principal: Option<&Principal>,
) -> Option<Vec<AccessRule>> {
    let opens = |role: &str| hub_model::principal::can_read(principal, Closed::Series { role });
    if opens(&config.admin_role) {
        return None;
    }
    let mut rules = config.open_rules.clone();
    for (role, extra) in &config.role_rules {
        if opens(role) {
            rules.extend(extra.iter().cloned());
        }
    }
    Some(rules)
}
