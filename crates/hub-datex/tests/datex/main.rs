//! Integration tests of hub-datex: schema validity of rendered feeds, the regression
//! against the reference's golden output, and the HTTP routes.

mod golden;
mod http;
mod schema;
mod support;
