//! From a provider's announcements to a rendered SituationPublication with its
//! validators: the situations of the feed, when it last changed, and until when it
//! stays the same if no announcement changes.

use std::cmp::Reverse;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::announcement::{Announcement, Skip};
use crate::current::{is_current, status, transitions, Status};
use crate::digest::Digest;
use crate::timezone::Zone;
use crate::{DatexError, ProviderConfig};

/// One situation of the feed.
#[derive(Debug)]
pub(crate) struct Situation<'a> {
    pub announcement: Announcement<'a>,
    pub status: Status,
}

/// The content of one provider's feed at one instant.
#[derive(Debug)]
pub(crate) struct Feed<'a> {
    pub provider: &'a ProviderConfig,
    pub zone: Zone,
    pub now: DateTime<Utc>,
    /// Sorted by situation id (plain string order, as the reference).
    pub situations: Vec<Situation<'a>>,
    /// The newest instant at which the feed's content changed: the newest `LastChange`
    /// of the provider's traffic events, or a start, end or local midnight that moved a
    /// situation in or out of the feed or changed its status, if that is newer.
    pub last_modified: Option<DateTime<Utc>>,
    /// The next instant at which time alone changes the content.
    pub valid_until: Option<DateTime<Utc>>,
}

impl<'a> Feed<'a> {
    pub(crate) fn build(
        provider: &'a ProviderConfig,
        announcements: &'a [Value],
        now: DateTime<Utc>,
        zone: Zone,
    ) -> Feed<'a> {
        let mut situations = Vec::new();
        let (mut last_modified, mut valid_until): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) =
            (None, None);
        let mut skipped = [0usize; 4];
        for doc in announcements {
            let announcement = match Announcement::read(doc, &provider.source, &zone) {
                Ok(a) => a,
                Err(skip) => {
                    skipped[skip as usize] += 1;
                    continue;
                }
            };
            last_modified = last_modified.max(Some(announcement.changed));
            for t in transitions(&announcement, &zone) {
                if t <= now {
                    last_modified = last_modified.max(Some(t));
                } else {
                    valid_until = Some(valid_until.map_or(t, |v| v.min(t)));
                }
            }
            if is_current(&announcement, now, &zone) {
                situations.push(Situation {
                    status: status(&announcement, now),
                    announcement,
                });
            }
        }
        // A change stamped in the future (clock skew, bad data) is not announced as one.
        last_modified = last_modified.map(|t| t.min(now));
        // One situation per id: the most recently changed document wins.
        situations.sort_by(|x, y| {
            x.announcement
                .id
                .cmp(y.announcement.id)
                .then(Reverse(x.announcement.changed).cmp(&Reverse(y.announcement.changed)))
        });
        let before = situations.len();
        situations.dedup_by(|later, first| later.announcement.id == first.announcement.id);
        if skipped[Skip::NoId as usize] + skipped[Skip::NoStartTime as usize] > 0
            || before != situations.len()
        {
            tracing::warn!(
                provider = %provider.name,
                without_id = skipped[Skip::NoId as usize],
                without_start_time = skipped[Skip::NoStartTime as usize],
                duplicate_ids = before - situations.len(),
                "traffic events left out of the DATEX feed"
            );
        }
        Feed {
            provider,
            zone,
            now,
            situations,
            last_modified,
            valid_until,
        }
    }

    /// Renders the document.
    pub(crate) fn render(&self) -> Result<Rendered, DatexError> {
        let (body, publication_time) =
            crate::xml::write(self, 4096 + self.situations.len() * 2600)?;
        // The entity tag covers everything but the publication time.
        let mut digest = Digest::new();
        digest.update(&body[..publication_time.start]);
        digest.update(&body[publication_time.end..]);
        Ok(Rendered {
            body,
            etag: format!("W/\"{:016x}\"", digest.finish()),
            last_modified: self.last_modified,
            valid_until: self.valid_until,
            situations: self.situations.len(),
        })
    }
}

/// A rendered feed and its HTTP validators.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The XML document.
    pub body: Vec<u8>,
    /// A weak entity tag (`W/"…"`) of the content; the publication time is left out, so
    /// a re-render of unchanged content has the same tag.
    pub etag: String,
    /// When the content last changed (see the crate README); `None` for a provider that
    /// has no traffic events at all.
    pub last_modified: Option<DateTime<Utc>>,
    /// The next instant at which the passing of time alone changes the content (a
    /// situation starts, ends, or its day is over); `None` when no such instant comes.
    pub valid_until: Option<DateTime<Utc>>,
    /// Number of situations in the document.
    pub situations: usize,
}
