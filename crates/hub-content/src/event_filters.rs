//! Event `begindate` / `enddate` (overlap of an `EventDate` range with
//! `[begindate 00:00, enddate 24:00)`) and `sort` (`asc`, `desc`, `upcoming` by the next
//! begin date; events without a future date last).

use chrono::{Duration, NaiveDate, NaiveDateTime};
use hub_query::content::{ContentFilter, ContentOrder};

use crate::error::ContentError;
use crate::list_query::EventListQuery;

const FORMAT: &str = "%Y-%m-%d %H:%M:%S";

fn parse_day(name: &str, value: Option<&str>) -> Result<Option<NaiveDateTime>, ContentError> {
    let Some(v) = value else {
        return Ok(None);
    };
    let day = NaiveDate::parse_from_str(v, "%Y-%m-%d")
        .map(|d| d.and_hms_opt(0, 0, 0).expect("midnight exists"))
        .or_else(|_| NaiveDateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S"))
        .map_err(|_| ContentError::InvalidParameter {
            parameter: name.into(),
            detail: format!("'{v}' is not a date; use yyyy-MM-dd"),
        })?;
    Ok(Some(day))
}

/// Adds the date window to `filters`; answers the order `sort` asks.
pub fn apply(
    q: &EventListQuery,
    filters: &mut Vec<ContentFilter>,
) -> Result<Option<ContentOrder>, ContentError> {
    let begin = parse_day("begindate", q.begindate.as_deref())?;
    // A whole day: the window ends at 24:00 of enddate (exclusive).
    let end = parse_day("enddate", q.enddate.as_deref())?.map(|d| {
        if d.time() == chrono::NaiveTime::MIN {
            d + Duration::days(1)
        } else {
            d
        }
    });
    if let (Some(b), Some(e)) = (begin, end) {
        if e <= b {
            return Err(ContentError::InvalidParameter {
                parameter: "enddate".into(),
                detail: "enddate is before begindate".into(),
            });
        }
    }
    if begin.is_some() || end.is_some() {
        filters.push(ContentFilter::DateOverlap {
            begin: begin.map(|d| d.format(FORMAT).to_string()),
            end: end.map(|d| d.format(FORMAT).to_string()),
        });
    }
    if let Some(v) = q.sort.as_deref() {
        let descending = match v.to_ascii_lowercase().as_str() {
            "asc" | "upcoming" => false,
            "desc" => true,
            _ => {
                return Err(ContentError::InvalidParameter {
                    parameter: "sort".into(),
                    detail: format!("'{v}' is not accepted; use asc, desc or upcoming"),
                })
            }
        };
        // "Next" is measured from begindate when given, else from now.
        let now = begin
            .unwrap_or_else(|| {
                crate::response_cache::uncacheable();
                chrono::Utc::now().naive_utc()
            })
            .format(FORMAT)
            .to_string();
        return Ok(Some(ContentOrder::NextBegin { descending, now }));
    }
    Ok(None)
}
