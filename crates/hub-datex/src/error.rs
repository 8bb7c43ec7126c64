//! The one error type of the crate and the problem a client sees for it.

use thiserror::Error;

/// Everything that can go wrong in configuring or rendering the feed.
///
/// Bad *announcements* are not errors: a document that cannot become a situation
/// (no category, no start time, another source) is left out of the feed, because one
/// broken document must not take the whole feed down.
#[derive(Debug, Error)]
pub enum DatexError {
    /// The configured time zone is neither an IANA name nor a UTC offset.
    #[error("unknown time zone {0:?}: use an IANA name such as Europe/Rome, UTC, or an offset such as +02:00")]
    TimeZone(String),
    /// A provider entry or the base URL of the configuration is not usable.
    #[error("invalid DATEX configuration: {0}")]
    Config(String),
    /// The announcement source could not be read.
    #[error("announcements could not be read: {0}")]
    Source(String),
    /// Writing the XML document failed (only possible through an I/O failure).
    #[error("writing the DATEX document failed: {0}")]
    Xml(#[from] std::io::Error),
}

impl DatexError {
    /// What a feed request answers when building the feed failed: always 503 with a
    /// fixed text (the cause is logged, not shown: it may name internal systems).
    pub fn to_problem(&self) -> hub_model::Problem {
        hub_model::Problem::unavailable(
            "The traffic announcements could not be read. Try again later.",
        )
    }
}
