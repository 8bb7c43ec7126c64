//! Configuration: the providers and the time zone of the feed.

use serde::{Deserialize, Serialize};

use crate::timezone::Zone;
use crate::DatexError;

/// The feed's configuration. Deserializable (every key optional) so it can sit in the
/// server's configuration file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatexConfig {
    /// The providers, each with its own feed.
    pub providers: Vec<ProviderConfig>,
    /// IANA time zone (default `Europe/Rome`) that decides "today" for short-lived
    /// events and in which times are written; `UTC` and offsets such as `+01:00` work too.
    pub time_zone: String,
    /// Absolute base URL of the feed (`http://127.0.0.1:8080`), used in discovery links.
    pub base_url: String,
}

/// One provider: the announcements of one source, published under one name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Path segment of the feed (`province-bz` → `/datex/2/province-bz/…`).
    pub name: String,
    /// Announcements whose `_Meta.Source` equals this (ignoring ASCII case) belong to
    /// the provider.
    pub source: String,
    /// DATEX country code of the supplier (`it`).
    pub country: String,
    /// National identifier of the supplier (`ITPBZ`).
    pub national_identifier: String,
}

impl Default for DatexConfig {
    /// The two demo providers: the South Tyrol traffic centre as the reference publishes
    /// it (`province-bz`, supplier it/ITPBZ), and the A22 Brenner motorway (`a22`,
    /// supplier it/IT492, the identifier the reference configuration gives the A22).
    fn default() -> Self {
        DatexConfig {
            providers: vec![
                ProviderConfig {
                    name: "province-bz".into(),
                    source: "PROVINCE_BZ".into(),
                    country: "it".into(),
                    national_identifier: "ITPBZ".into(),
                },
                ProviderConfig {
                    name: "a22".into(),
                    source: "A22".into(),
                    country: "it".into(),
                    national_identifier: "IT492".into(),
                },
            ],
            time_zone: "Europe/Rome".into(),
            base_url: "http://127.0.0.1:8080".into(),
        }
    }
}

/// The values of the DATEX II v2.0 `CountryEnum`.
const COUNTRIES: &[&str] = &[
    "at", "be", "bg", "ch", "cs", "cy", "cz", "de", "dk", "ee", "es", "fi", "fo", "fr", "gb", "gg",
    "gi", "gr", "hr", "hu", "ie", "im", "is", "it", "je", "li", "lt", "lu", "lv", "ma", "mc", "mk",
    "mt", "nl", "no", "pl", "pt", "ro", "se", "si", "sk", "sm", "tr", "va", "other",
];

impl DatexConfig {
    /// Checks what would otherwise surface only as invalid documents or broken links:
    /// the time zone, the base URL, and every provider (a non-empty name usable as one
    /// path segment and unique ignoring case, a source, a DATEX country code, a national
    /// identifier of 1 to 1024 characters).
    pub fn validate(&self) -> Result<(), DatexError> {
        Zone::parse(&self.time_zone)?;
        let config = |msg: String| Err(DatexError::Config(msg));
        let base = self.base_url.trim();
        if !(base.starts_with("http://") || base.starts_with("https://"))
            || base.len() <= "https://".len()
        {
            return config(format!(
                "base_url {:?} must be an absolute http(s) URL",
                self.base_url
            ));
        }
        for (i, p) in self.providers.iter().enumerate() {
            let segment_ok = !p.name.is_empty()
                && p.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
                && p.name != "."
                && p.name != "..";
            if !segment_ok {
                return config(format!(
                    "provider name {:?} must be letters, digits, '-', '_', '.' or '~'",
                    p.name
                ));
            }
            if self.providers[..i]
                .iter()
                .any(|q| q.name.eq_ignore_ascii_case(&p.name))
            {
                return config(format!("provider name {:?} is used twice", p.name));
            }
            if p.source.trim().is_empty() {
                return config(format!("provider {:?} has no source", p.name));
            }
            if !COUNTRIES.contains(&p.country.as_str()) {
                return config(format!("provider {:?}: country {:?} is not a DATEX II country code (lower case, such as \"it\")", p.name, p.country));
            }
            let id_chars = p.national_identifier.chars().count();
            if p.national_identifier.trim().is_empty() || id_chars > crate::text::MAX_CHARS {
                return config(format!(
                    "provider {:?}: national_identifier must have 1 to 1024 characters",
                    p.name
                ));
            }
        }
        Ok(())
    }

    /// The provider with this name, ignoring ASCII case.
    pub fn provider(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_has_two_providers() {
        let config = DatexConfig::default();
        config.validate().unwrap();
        assert_eq!(config.providers.len(), 2);
        assert_eq!(
            config.provider("PROVINCE-BZ").unwrap().national_identifier,
            "ITPBZ"
        );
        assert_eq!(config.provider("a22").unwrap().source, "A22");
    }

    #[test]
    fn mistakes_are_reported() {
        let with = |f: &dyn Fn(&mut DatexConfig)| {
            let mut c = DatexConfig::default();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert!(with(&|c| c.time_zone = "Mars/Olympus".into()).contains("Mars/Olympus"));
        assert!(with(&|c| c.base_url = "/datex".into()).contains("absolute"));
        assert!(with(&|c| c.providers[1].name = "Province-BZ".into()).contains("used twice"));
        assert!(with(&|c| c.providers[0].name = "a/b".into()).contains("a/b"));
        assert!(with(&|c| c.providers[0].country = "IT".into()).contains("country"));
        assert!(
            with(&|c| c.providers[0].national_identifier = String::new())
                .contains("national_identifier")
        );
    }

    #[test]
    fn reads_from_json_with_defaults() {
        let c: DatexConfig = serde_json::from_str(r#"{"time_zone": "UTC"}"#).unwrap();
        assert_eq!(c.time_zone, "UTC");
        assert_eq!(c.providers, DatexConfig::default().providers);
        assert!(
            serde_json::from_str::<DatexConfig>(r#"{"timezone": "UTC"}"#).is_err(),
            "misspelt keys are rejected"
        );
    }
}
