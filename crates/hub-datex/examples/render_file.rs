//! Renders announcements from a JSON file (a Content API list with `Items`, or an
//! array) to stdout: `cargo run -p hub-datex --example render_file -- FILE [PROVIDER] [NOW]`.

use hub_datex::{render_situation_publication, DatexConfig};
use serde_json::Value;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: render_file FILE [PROVIDER] [NOW as RFC 3339]");
    let provider_name = args.next().unwrap_or_else(|| "province-bz".into());
    let now = args
        .next()
        .map(|t| {
            chrono::DateTime::parse_from_rfc3339(&t)
                .expect("NOW must be RFC 3339")
                .with_timezone(&chrono::Utc)
        })
        .unwrap_or_else(chrono::Utc::now);
    let json: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("readable file")).expect("JSON");
    let items = json.get("Items").cloned().unwrap_or(json);
    let config = DatexConfig::default();
    let provider = config
        .provider(&provider_name)
        .expect("a configured provider");
    let xml = render_situation_publication(
        provider,
        items.as_array().expect("an array of announcements"),
        now,
        &config.time_zone,
    )
    .unwrap();
    use std::io::Write;
    std::io::stdout().write_all(&xml).unwrap();
}
