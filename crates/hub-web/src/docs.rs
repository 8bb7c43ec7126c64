//! `/docs/`: Swagger UI over both OpenAPI documents, from the `utoipa-swagger-ui` crate's
//! vendored copy of its assets (nothing is fetched at build or run time).

use utoipa_swagger_ui::{Config, SwaggerUi, Url};

/// The Content API's document is served by the server itself (`/swagger/v1/swagger.json`),
/// the Time Series API's by its own router (`/v2/apispec`); Swagger UI only links them.
pub(crate) fn swagger_ui() -> SwaggerUi {
    let config = Config::new([
        Url::new("Content API (/v1)", "/swagger/v1/swagger.json"),
        Url::new("Time Series API (/v2)", "/v2/apispec"),
    ])
    // The default validator badge would call an outside service.
    .validator_url("none")
    .try_it_out_enabled(true)
    .display_request_duration(true)
    // Tokens stay in the page's memory: no copy in localStorage.
    .persist_authorization(false);
    SwaggerUi::new("/docs").config(config)
}
