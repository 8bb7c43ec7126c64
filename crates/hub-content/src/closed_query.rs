//! The closed-data rule for query inputs: a caller without the reading role may not
//! select, sort, search or count by closed data. Every path a query names (`rawfilter`,
//! `expression`, Find's `filteronfields`, `rawsort`) that reaches a closed part is
//! refused with a 400 naming the parameter and the path; conditions the store evaluates
//! on index columns derived from closed parts are refused the same way, except the
//! title search, which is evaluated over the reduced document (for rooms: the id only).
//!
//! Owns: which paths and list conditions reach closed data, derived from the tables of
//! [`crate::closed`] (one table, not a second list). Must not: reduce documents (that is
//! [`crate::closed`]), parse parameters (`list_query`, `params`) or decide who holds the
//! reading role (`hub_model::principal`).

use hub_model::principal::CLOSED_DATA_ROLES;
use hub_query::content::rawfilter::{JsonPath, PathSegment, RawFilter};
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery};

use crate::closed::{CLOSED_ACCOMMODATION_FIELDS, OPEN_ROOM_FIELDS};
use crate::error::ContentError;

/// True when a path of an `entity` document whose first segment is `first` (`None` for an
/// index or `[*]`) reaches data the reduced document does not have. Keys compare
/// case-insensitively, so no spelling of a closed field slips through.
pub fn path_is_closed(entity: &str, first: Option<&str>) -> bool {
    let listed =
        |table: &[&str]| first.is_some_and(|k| table.iter().any(|f| f.eq_ignore_ascii_case(k)));
    match entity {
        "Accommodation" => listed(CLOSED_ACCOMMODATION_FIELDS),
        // A room is closed as a whole except its open fields.
        "AccommodationRoom" => !listed(OPEN_ROOM_FIELDS),
        _ => false,
    }
}

/// Whether the documents of `entity` are reduced as a whole (only listed fields open),
/// so the index columns the store derives from titles, tags and positions are closed too.
fn closed_as_a_whole(entity: &str) -> bool {
    path_is_closed(entity, Some("AccoRoomDetail")) && path_is_closed(entity, Some("Tags"))
}

fn first_key(path: &JsonPath) -> Option<&str> {
    match path.segments.first() {
        Some(PathSegment::Key(k)) => Some(k),
        _ => None,
    }
}

/// The paths of a filter expression, in the order written.
fn filter_paths<'a>(filter: &'a RawFilter, out: &mut Vec<&'a JsonPath>) {
    match filter {
        RawFilter::And(all) | RawFilter::Or(all) => all.iter().for_each(|f| filter_paths(f, out)),
        RawFilter::Not(inner) => filter_paths(inner, out),
        RawFilter::Compare { path, .. }
        | RawFilter::Like { path, .. }
        | RawFilter::LikeIn { path, .. }
        | RawFilter::In { path, .. }
        | RawFilter::IsNull { path, .. } => out.push(path),
    }
}

/// The 400 for a closed path named in `parameter`.
pub fn closed_path_error(entity: &str, parameter: &str, path: &str) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.to_string(),
        detail: format!(
            "'{path}' is closed data of {entity}; filtering, sorting or searching on it needs a reading role ({} or {entity}_Read)",
            CLOSED_DATA_ROLES.join(", ")
        ),
    }
}

fn closed_condition_error(entity: &str, parameter: &str, what: &str) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.to_string(),
        detail: format!(
            "{what} of {entity} are closed data; {parameter} needs a reading role ({} or {entity}_Read)",
            CLOSED_DATA_ROLES.join(", ")
        ),
    }
}

/// Refuses the first closed path in `paths` (as named in `parameter`).
pub fn check_paths<'a>(
    entity: &str,
    parameter: &str,
    paths: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Result<(), ContentError> {
    match paths
        .into_iter()
        .find(|(_, first)| path_is_closed(entity, *first))
    {
        Some((text, _)) => Err(closed_path_error(entity, parameter, text)),
        None => Ok(()),
    }
}

/// One list condition as a caller without the reading role may ask it: unchanged,
/// rewritten to what the reduced document answers, or refused.
fn open_filter(entity: &str, filter: ContentFilter) -> Result<ContentFilter, ContentError> {
    let whole = closed_as_a_whole(entity);
    match filter {
        ContentFilter::Raw { filter, parameter } => {
            let mut paths = Vec::new();
            filter_paths(&filter, &mut paths);
            check_paths(
                entity,
                parameter,
                paths.iter().map(|p| (p.text.as_str(), first_key(p))),
            )?;
            Ok(ContentFilter::Raw { filter, parameter })
        }
        // The reduced room has no title: only the id can match.
        ContentFilter::Search { id_key, .. } if whole => Ok(ContentFilter::IdIn(vec![id_key])),
        ContentFilter::Tags { kind, .. } if whole => Err(closed_condition_error(
            entity,
            if kind == "hubtag" {
                "odhtagfilter"
            } else {
                "tagfilter"
            },
            "tags",
        )),
        ContentFilter::Radius(_) if whole => {
            Err(closed_condition_error(entity, "latitude", "positions"))
        }
        ContentFilter::Area(_) if whole => {
            Err(closed_condition_error(entity, "polygon", "positions"))
        }
        ContentFilter::LocationIn(_) if whole => {
            Err(closed_condition_error(entity, "locfilter", "locations"))
        }
        ContentFilter::AreaIn(_) if whole => {
            Err(closed_condition_error(entity, "areafilter", "areas"))
        }
        other => Ok(other),
    }
}

/// A list query as a caller without the reading role may ask it (see the module doc).
/// Entity types without closed parts pass unchanged.
pub fn open_query(mut query: ContentQuery) -> Result<ContentQuery, ContentError> {
    let entity = query.entity;
    if let ContentOrder::Raw(keys) = &query.order {
        check_paths(
            entity,
            "rawsort",
            keys.iter()
                .map(|k| (k.path.text.as_str(), first_key(&k.path))),
        )?;
    }
    if matches!(query.order, ContentOrder::Distance { .. }) && closed_as_a_whole(entity) {
        return Err(closed_condition_error(entity, "latitude", "positions"));
    }
    query.filters = query
        .filters
        .into_iter()
        .map(|f| open_filter(entity, f))
        .collect::<Result<_, _>>()?;
    Ok(query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::content::rawfilter::{parse_rawfilter, parse_rawsort};
    use hub_query::content::Page;

    #[test]
    fn closed_paths_come_from_the_reduction_tables() {
        // (entity, first segment, closed?)
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("Accommodation", Some("Availability"), true),
            ("Accommodation", Some("availability"), true),
            ("Accommodation", Some("ACCOROOMINFO"), true),
            ("Accommodation", Some("AccoDetail"), false),
            ("Accommodation", None, false),
            ("AccommodationRoom", Some("PriceFrom"), true),
            ("AccommodationRoom", Some("AccoRoomDetail"), true),
            ("AccommodationRoom", Some("Tags"), true),
            ("AccommodationRoom", None, true),
            ("AccommodationRoom", Some("id"), false),
            ("AccommodationRoom", Some("A0RID"), false),
            ("AccommodationRoom", Some("_Meta"), false),
            ("Event", Some("Availability"), false),
        ];
        for (entity, first, closed) in cases {
            assert_eq!(
                path_is_closed(entity, *first),
                *closed,
                "{entity} {first:?}"
            );
        }
    }

    fn query(entity: &'static str, rawfilter: Option<&str>, rawsort: Option<&str>) -> ContentQuery {
        ContentQuery {
            entity,
            filters: rawfilter
                .map(|t| ContentFilter::Raw {
                    filter: parse_rawfilter(t).unwrap(),
                    parameter: "rawfilter",
                })
                .into_iter()
                .collect(),
            order: rawsort.map_or(ContentOrder::Default, |t| {
                ContentOrder::Raw(parse_rawsort(t).unwrap())
            }),
            page: Page {
                size: 10,
                number: 1,
            },
            count_limit: None,
        }
    }

    fn refused(result: Result<ContentQuery, ContentError>) -> Option<String> {
        match result {
            Err(ContentError::InvalidParameter { parameter, .. }) => Some(parameter),
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => None,
        }
    }

    #[test]
    fn closed_paths_are_refused_in_every_form() {
        // (entity, rawfilter, rawsort, refused parameter)
        type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                "Accommodation",
                Some("eq(Availability.0.PriceFrom,147)"),
                None,
                Some("rawfilter"),
            ),
            (
                "Accommodation",
                Some("eq(availability[0].PriceFrom,147)"),
                None,
                Some("rawfilter"),
            ),
            (
                "Accommodation",
                Some("or(eq(Active,true),isnotnull(AccoRoomInfo.[*].Id))"),
                None,
                Some("rawfilter"),
            ),
            ("Accommodation", Some("eq(Active,true)"), None, None),
            (
                "Accommodation",
                None,
                Some("-Availability.0.PriceFrom"),
                Some("rawsort"),
            ),
            (
                "Accommodation",
                None,
                Some("Shortname,accoroominfo.0.Id"),
                Some("rawsort"),
            ),
            (
                "Accommodation",
                Some("eq(AccoDetail.de.Name,'x')"),
                Some("Shortname"),
                None,
            ),
            (
                "AccommodationRoom",
                Some("gt(PriceFrom,1)"),
                None,
                Some("rawfilter"),
            ),
            (
                "AccommodationRoom",
                Some("like(AccoRoomDetail.de.Name,'x')"),
                None,
                Some("rawfilter"),
            ),
            (
                "AccommodationRoom",
                Some("eq(A0RID,'x')"),
                Some("Shortname"),
                None,
            ),
            (
                "Event",
                Some("eq(Availability.0.PriceFrom,1)"),
                Some("AccoRoomInfo"),
                None,
            ),
        ];
        for (entity, rawfilter, rawsort, expected) in cases {
            let got = refused(open_query(query(entity, *rawfilter, *rawsort)));
            assert_eq!(
                got.as_deref(),
                *expected,
                "{entity} {rawfilter:?} {rawsort:?}"
            );
        }
    }

    #[test]
    fn room_conditions_on_closed_index_columns() {
        let search = || ContentFilter::Search {
            folded_term: "suite".into(),
            id_key: "suite".into(),
            languages: None,
        };
        let mut q = query("AccommodationRoom", None, None);
        q.filters = vec![search()];
        assert_eq!(
            open_query(q).unwrap().filters,
            vec![ContentFilter::IdIn(vec!["suite".into()])]
        );
        let mut q = query("Accommodation", None, None);
        q.filters = vec![search()];
        assert_eq!(open_query(q).unwrap().filters, vec![search()]);
        let mut q = query("AccommodationRoom", None, None);
        q.filters = vec![ContentFilter::LocationIn(vec!["reg1".into()])];
        assert_eq!(refused(open_query(q)).as_deref(), Some("locfilter"));
    }
}
