//! The location and area ids of a document, stored as `content_tag` rows so `locfilter`
//! and `areafilter` are index lookups instead of JSON scans.
//!
//! Location tokens are the `locfilter` spelling: `reg`, `tvs`, `mun` or `fra` followed by
//! the lower-case id of `LocationInfo.{RegionInfo,TvInfo,MunicipalityInfo,DistrictInfo}.Id`
//! (`fra` also from a top-level `DistrictId`, as events and accommodations carry it).
//! Area ids come from `AreaIds` (and the legacy `AreaId`).

use serde_json::Value;

/// `content_tag.kind` of location tokens.
pub const LOCATION_KIND: &str = "location";
/// `content_tag.kind` of area ids.
pub const AREA_KIND: &str = "area";

pub(crate) fn location_tags(doc: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let info = &doc["LocationInfo"];
    for (prefix, key) in [
        ("reg", "RegionInfo"),
        ("tvs", "TvInfo"),
        ("mun", "MunicipalityInfo"),
        ("fra", "DistrictInfo"),
    ] {
        if let Some(id) = info[key]["Id"].as_str().filter(|s| !s.is_empty()) {
            out.push((LOCATION_KIND, format!("{prefix}{}", id.to_lowercase())));
        }
    }
    if let Some(id) = doc["DistrictId"].as_str().filter(|s| !s.is_empty()) {
        out.push((LOCATION_KIND, format!("fra{}", id.to_lowercase())));
    }
    for key in ["AreaIds", "AreaId"] {
        if let Some(list) = doc[key].as_array() {
            out.extend(
                list.iter()
                    .filter_map(Value::as_str)
                    .map(|a| (AREA_KIND, a.to_lowercase())),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_as_locfilter_spells_them() {
        let doc = json!({"LocationInfo": {"RegionInfo": {"Id": "R1"}, "TvInfo": {"Id": "T1"}, "MunicipalityInfo": {"Id": "M1"}, "DistrictInfo": {"Id": ""}},
            "DistrictId": "D1", "AreaIds": ["A1", "a2"]});
        assert_eq!(
            location_tags(&doc),
            vec![
                ("location", "regr1".into()),
                ("location", "tvst1".into()),
                ("location", "munm1".into()),
                ("location", "frad1".into()),
                ("area", "a1".into()),
                ("area", "a2".into())
            ]
        );
    }
}
