//! `GET /v1/Filter?expression=…`: one filter expression (the `rawfilter` language) over
//! several entity types. Parameters: `expression` (required), `type` / `odhtype` (comma
//! list of type names, ODH spellings accepted; default the main tourism types),
//! `limitto` (documents per type, 1..=100, default 5), `language`, `fields`,
//! `removenullvalues`, `rawsort` (order within each type; default order otherwise). Answer, adapted from the reference's Find/Filter shape:
//! `{"totalResults", "expression", "detailedResults": {type: count}, "Items": [...]}`
//! where counts are the full numbers of matches and Items the first `limitto` of each
//! type (default order), each with its `_Meta.Type`.

use axum::extract::{RawQuery as AxumRawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use hub_model::EntityType;
use hub_query::content::{ContentOrder, ContentQuery, Page};
use serde_json::{Map, Value};

use crate::error::ContentError;
use crate::list_query::{rawfilter_param, rawsort_param};
use crate::params::{Projection, RawQuery};
use crate::shape::shape_document;
use crate::ContentState;

const DEFAULT_TYPES: &[&str] = &[
    "Accommodation",
    "HubActivityPoi",
    "Event",
    "Article",
    "Region",
    "SkiArea",
    "TourismAssociation",
    "WebcamInfo",
];

/// The query of Filter; also its OpenAPI parameters.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FilterQuery {
    /// A rawfilter expression, such as eq(Active,true)
    #[param(value_type = String, required = true)]
    pub expression: Option<String>,
    /// Comma list of entity types (also odhtype); default the main tourism types
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub entity_type: Option<String>,
    /// Documents per type, 1 to 100 (default 5)
    #[param(value_type = Option<u32>)]
    pub limitto: Option<String>,
    /// Sort keys (rawsort syntax) applied within each type
    pub rawsort: Option<String>,
    /// Keep only this language
    pub language: Option<String>,
    /// Comma-separated paths to return
    pub fields: Option<String>,
    /// Omit null and empty fields
    #[param(value_type = Option<bool>)]
    pub removenullvalues: Option<String>,
    /// Alias of type
    pub odhtype: Option<String>,
}

pub async fn filter(
    State(state): State<ContentState>,
    AxumRawQuery(query): AxumRawQuery,
    principal: Option<axum::Extension<hub_auth::Principal>>,
) -> Result<Response, ContentError> {
    let principal = principal.map(|axum::Extension(p)| p);
    let raw = RawQuery::parse(query.as_deref());
    let q: FilterQuery = raw.typed();
    let expression = q
        .expression
        .as_deref()
        .ok_or_else(|| ContentError::InvalidParameter {
            parameter: "expression".into(),
            detail: "a filter expression is required, such as eq(Active,true)".into(),
        })?;
    let filter = rawfilter_param("expression", Some(expression))?.expect("an expression is given");
    let types: Vec<&'static EntityType> = match q.entity_type.as_deref().or(q.odhtype.as_deref()) {
        None => DEFAULT_TYPES
            .iter()
            .filter_map(|n| EntityType::by_name(n))
            .collect(),
        Some(list) => {
            crate::params::check_list("type", list)?;
            let mut types: Vec<&'static EntityType> = Vec::new();
            for t in crate::entity_filters::comma_list(list) {
                let entity =
                    EntityType::by_meta_type(t).ok_or_else(|| ContentError::InvalidParameter {
                        parameter: "type".into(),
                        detail: format!("'{t}' is not an entity type; GET /v1 lists them"),
                    })?;
                // Each type once: a repeated one would be queried and counted again.
                if !types.iter().any(|known| known.name == entity.name) {
                    types.push(entity);
                }
            }
            types
        }
    };
    let limit = crate::utility::find::limitto(q.limitto.as_deref())?;
    let order = rawsort_param("rawsort", q.rawsort.as_deref())?
        .map_or(ContentOrder::Default, ContentOrder::Raw);
    let projection = Projection::from_values(
        q.language.as_deref(),
        q.fields.as_deref(),
        q.removenullvalues.as_deref(),
    )?
    .in_naming(crate::routes::request_naming(&state, "Filter", &raw));
    let mut total = 0;
    let mut detailed = Map::new();
    let mut items = Vec::new();
    for entity in types {
        let query = ContentQuery {
            entity: entity.name,
            filters: vec![filter.clone()],
            order: order.clone(),
            page: Page {
                size: limit,
                number: 1,
            },
            count_limit: None,
        };
        // Closed parts (accommodation rooms, availability) stay hidden, as on lists.
        let full = hub_auth::policy::can_read_closed(principal.as_ref(), entity.name);
        let page = crate::closed::with_access(
            full,
            crate::closed::list_visible(&*state.content, entity, query),
        )
        .await?;
        total += page.total;
        let type_name = match projection.naming {
            hub_model::Naming::Odh => hub_model::naming::odh_type(entity.meta_type),
            hub_model::Naming::Hub => entity.meta_type,
        };
        detailed.insert(type_name.to_string(), Value::from(page.total));
        for doc in &page.docs {
            items.push(shape_document(doc, &projection)?);
        }
    }
    let mut body = format!(
        "{{\"totalResults\":{total},\"expression\":{},\"detailedResults\":{},\"Items\":[",
        Value::from(expression),
        Value::Object(detailed)
    );
    body.push_str(&items.join(","));
    body.push_str("]}");
    Ok((
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body,
    )
        .into_response())
}
