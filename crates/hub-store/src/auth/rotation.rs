//! The refresh-token rotation decision, one pure function both backends call with the
//! row they loaded (under whatever locks they need) before they write anything.
//!
//! Owns: which presentation rotates, which revokes a session, which is refused, and
//! when ended sessions are forgotten. Must not: touch a connection.

use super::{RefreshOutcome, RefreshRecord};

/// A stored refresh token with its state.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRefresh {
    pub record: RefreshRecord,
    /// When it was rotated, if it was.
    pub used_at: Option<i64>,
    /// Revoked with its family (reuse, password change).
    pub revoked: bool,
}

/// What to do with a presented refresh token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// Current: mark it used and store its successor.
    Rotate,
    /// Used before: someone replays it; revoke the whole family.
    ReuseDetected,
    /// No such token.
    Unknown,
    /// Revoked already (its session ended).
    Revoked,
    /// Issued to another client than the one presenting it: left untouched, so a
    /// client cannot revoke another's session by presenting its token.
    WrongClient,
    /// The token or its session has expired.
    Expired,
}

impl Rotation {
    /// The outcome of every decision but `Rotate`, whose outcome carries the successor.
    pub fn refused(self) -> RefreshOutcome {
        match self {
            Rotation::ReuseDetected => RefreshOutcome::Reused,
            _ => RefreshOutcome::Invalid,
        }
    }
}

/// Decides a presentation of `stored` (None: unknown) by `client_id` at `now`. Checks
/// in this order: revoked, client, reuse (a replayed token revokes its session even
/// after it expired), expiry.
pub fn decide_rotation(stored: Option<&StoredRefresh>, client_id: &str, now: i64) -> Rotation {
    let Some(stored) = stored else {
        return Rotation::Unknown;
    };
    let record = &stored.record;
    if stored.revoked {
        Rotation::Revoked
    } else if record.client_id != client_id {
        Rotation::WrongClient
    } else if stored.used_at.is_some() {
        Rotation::ReuseDetected
    } else if record.expires_at <= now || record.session_expires_at <= now {
        Rotation::Expired
    } else {
        Rotation::Rotate
    }
}

/// How long after a session ended its tokens are kept (so a late replay still reads as
/// reuse rather than unknown for a while).
const ENDED_SESSIONS_KEPT_SECONDS: i64 = 86_400;

/// Tokens of sessions that ended before this instant are deleted by housekeeping.
pub fn forget_sessions_ended_before(now: i64) -> i64 {
    now - ENDED_SESSIONS_KEPT_SECONDS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(
        client: &str,
        used_at: Option<i64>,
        revoked: bool,
        expires: i64,
        session: i64,
    ) -> StoredRefresh {
        StoredRefresh {
            record: RefreshRecord {
                token_hash: "h".into(),
                family: "f".into(),
                username: "u".into(),
                client_id: client.into(),
                scope: "openid".into(),
                issued_at: 0,
                expires_at: expires,
                session_expires_at: session,
            },
            used_at,
            revoked,
        }
    }

    #[test]
    fn rotation_decisions() {
        use Rotation::*;
        let now = 100;
        // (stored token, presenting client, expected)
        let table: &[(Option<StoredRefresh>, &str, Rotation)] = &[
            (None, "c", Unknown),
            (Some(stored("c", None, false, 200, 1000)), "c", Rotate),
            (
                Some(stored("c", Some(50), false, 200, 1000)),
                "c",
                ReuseDetected,
            ),
            // A replay is reuse even once the token has expired.
            (
                Some(stored("c", Some(50), false, 90, 1000)),
                "c",
                ReuseDetected,
            ),
            (Some(stored("c", None, true, 200, 1000)), "c", Revoked),
            (Some(stored("c", Some(50), true, 200, 1000)), "c", Revoked),
            (
                Some(stored("c", None, false, 200, 1000)),
                "other",
                WrongClient,
            ),
            // Another client's replay leaves the session alone.
            (
                Some(stored("c", Some(50), false, 200, 1000)),
                "other",
                WrongClient,
            ),
            (Some(stored("c", None, true, 200, 1000)), "other", Revoked),
            (Some(stored("c", None, false, 100, 1000)), "c", Expired),
            (Some(stored("c", None, false, 99, 1000)), "c", Expired),
            (Some(stored("c", None, false, 200, 100)), "c", Expired),
            (Some(stored("c", None, false, 101, 101)), "c", Rotate),
        ];
        for (i, (row, client, expected)) in table.iter().enumerate() {
            assert_eq!(
                decide_rotation(row.as_ref(), client, now),
                *expected,
                "row {i}"
            );
        }
    }

    #[test]
    fn refused_outcomes() {
        use Rotation::*;
        let table = [
            (ReuseDetected, RefreshOutcome::Reused),
            (Unknown, RefreshOutcome::Invalid),
            (Revoked, RefreshOutcome::Invalid),
            (WrongClient, RefreshOutcome::Invalid),
            (Expired, RefreshOutcome::Invalid),
        ];
        for (decision, expected) in table {
            assert_eq!(decision.refused(), expected, "{decision:?}");
        }
    }

    #[test]
    fn ended_sessions_are_forgotten_after_a_day() {
        for (now, expected) in [(86_400, 0), (100_000, 13_600), (0, -86_400)] {
            assert_eq!(forget_sessions_ended_before(now), expected);
        }
    }
}
