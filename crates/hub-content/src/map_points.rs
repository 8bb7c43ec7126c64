//! The map points of a Content list as a caller may see them: each located match's id,
//! position and `Shortname`, in the default order, up to a cap (what a vector tile
//! draws).
//!
//! The store reads them from each row's columns ([`ContentRepo::points`]), never
//! parsing a document, whenever the closed-data reduction leaves those members as they
//! are for this caller (every entity type but the accommodation rooms, whose positions
//! are closed). Otherwise the documents are read page by page through
//! [`crate::closed::list_visible`] and the points taken from the reduced documents, so a
//! point shows exactly what the caller's documents show.
//!
//! Owns: the choice between the two reads. Must not: encode tiles, or decide what is
//! closed (that is [`crate::closed`] and [`crate::closed_query`]).

use hub_model::EntityType;
use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
use hub_store::{ContentRepo, MapPoint};

use crate::error::ContentError;
use crate::geojson::Place;

/// Documents read per store page when the points come from the documents. SQLite sorts
/// a page's documents by their keys; 5,000 of them (25 MB) went through temporary
/// files: 1,000 keep the sort in memory.
const READ_PAGE: u32 = 1_000;

/// The first `cap` points of the documents of `entity` matching `filters` that the
/// caller may see (inside [`crate::closed::with_access`]), and whether more were left
/// out.
pub async fn visible_points(
    repo: &dyn ContentRepo,
    entity: &EntityType,
    filters: Vec<ContentFilter>,
    cap: usize,
) -> Result<(Vec<MapPoint>, bool), ContentError> {
    let query = |number| ContentQuery {
        entity: entity.name,
        filters: filters.clone(),
        order: ContentOrder::Default,
        page: Page {
            size: READ_PAGE,
            number,
        },
        count_limit: None,
    };
    let reduced = crate::closed::has_closed_parts(entity.name) && !crate::closed::full_access();
    if !reduced || !Place::named_members().reaches_reduced(entity.name) {
        let query = if reduced {
            crate::closed_query::open_query(query(1))?
        } else {
            query(1)
        };
        let mut points = repo.points(query, cap as u64 + 1).await?;
        let capped = points.len() > cap;
        points.truncate(cap);
        return Ok((points, capped));
    }
    let mut points = Vec::new();
    for number in 1.. {
        let page = crate::closed::list_visible(repo, entity, query(number)).await?;
        let last = page.docs.len() < READ_PAGE as usize;
        for doc in &page.docs {
            let Some((place, shortname)) = Place::named(doc) else {
                continue;
            };
            let Some((latitude, longitude)) = place.position else {
                continue;
            };
            if points.len() == cap {
                return Ok((points, true));
            }
            points.push(MapPoint {
                id: place.id.unwrap_or_default(),
                latitude,
                longitude,
                shortname,
            });
        }
        if last {
            break;
        }
    }
    Ok((points, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An accommodation's reduction keeps its id, position and name: its points come
    /// from the rows for every caller. A room's drops its position: without the role its
    /// points come from the reduced documents.
    #[test]
    fn rows_answer_where_the_reduction_keeps_what_a_point_carries() {
        let members = Place::named_members();
        assert!(!members.reaches_reduced("Accommodation"));
        assert!(!members.reaches_reduced("HubActivityPoi"));
        assert!(members.reaches_reduced("AccommodationRoom"));
    }
}
