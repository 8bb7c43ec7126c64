//! The OpenAPI documents describe what the server does: schemathesis (pinned in
//! `tests/requirements.in`) generates requests from `/swagger/v1/swagger.json` and
//! `/v2/apispec` against the real router over the demo data, listening on a loopback
//! port, and checks every answer against the document. Two passes per document, each
//! bounded and with a fixed seed:
//!
//! - conformance: every check (no server error, documented status codes, content types,
//!   headers and schemas, schema-valid requests accepted, schema-violating ones refused,
//!   405 + `Allow` for undeclared methods), with a reader's token; the parameters whose
//!   validity a schema cannot state get a valid value from `tests/schemathesis/*.toml`;
//! - robustness: anonymous, every parameter generated freely, checking that nothing is a
//!   server error and every answer is documented.
//!
//! The GeoConverter's `url` operations are left out: they fetch the address they are
//! given, and this test sends no traffic beyond the loopback interface.
//! On PostgreSQL (`HUB_TEST_DATABASE`) the coverage pass is left out (see below).
//! Skipped with a printed reason when schemathesis is absent, unless `HUB_REQUIRE_TOOLS=1`.

mod support;

use std::future::IntoFuture;
use std::path::{Path, PathBuf};
use std::process::Command;

const ANCHOR: &str = "2025-06-15T12:00:00Z";
const SEED: &str = "20261124";
/// Requests per operation in the fuzzing phases (`HUB_SCHEMATHESIS_EXAMPLES` overrides).
const DEFAULT_EXAMPLES: &str = "3";
/// Operations the coverage phase walks (it tries every bound and enum of each parameter):
/// every utility route, the token service, and the Accommodation and Event lists (the
/// other lists share their handler and common parameters); fuzzing covers all
/// operations, each dataset's own parameters included.
const COVERAGE_PATHS: &str = "^/(v1/(Accommodation|Event)|v1/(Filter|Find|Distinct|Location.*|GeoShapes.*|Deprecated)|v1|auth/.*)$";
/// Page size of the fuzzing passes: a page of 1,000 accommodations costs seconds in a
/// debug build, and the coverage pass already walks `pagesize`'s bounds.
const FUZZING_PAGE_SIZE: &str = "\"query.pagesize\" = 20\n";
const NOT_FETCHING: &str = "GeoConverter/(Kml|Gpx)ToGeoJson$";

fn schemathesis_available() -> bool {
    Command::new("schemathesis")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/schemathesis")
}

/// One schemathesis run; its exit status and output. It runs in a directory of its own:
/// Hypothesis keeps the examples it found in its working directory and replays them in
/// later runs, so a shared directory would make a run depend on earlier ones.
fn run(schema_url: &str, base: &str, args: &[&str]) -> (bool, String) {
    let workdir = tempfile::tempdir().expect("a working directory");
    let mut command = Command::new("schemathesis");
    command
        .current_dir(workdir.path())
        .env("NO_COLOR", "1")
        .args(args.iter().take_while(|a| **a != "--"))
        .arg("run")
        .arg(schema_url)
        .args(["--url", base, "--seed", SEED, "--workers", "1"])
        .args(["--output-truncate", "true", "--no-shrink"])
        .args(args.iter().skip_while(|a| **a != "--").skip(1));
    let output = command.output().expect("schemathesis runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// Runs the passes on two threads, each taking the next pass in the list when it is free;
/// the outcomes (name, success, output) come back in the list's order.
fn run_two_at_a_time<'a>(
    passes: &[(&'a str, &str, Vec<&str>)],
    base: &str,
) -> Vec<(&'a str, bool, String)> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, schema, args)) = passes.get(index) else {
                    break;
                };
                let (ok, text) = run(schema, base, args);
                outcomes.lock().unwrap().push((index, *name, ok, text));
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|(index, ..)| *index);
    outcomes
        .into_iter()
        .map(|(_, name, ok, text)| (name, ok, text))
        .collect()
}

/// The summary lines a reader needs (operations, cases, failures), from the output.
fn summary(text: &str) -> String {
    text.lines()
        .skip_while(|l| !l.contains("SUMMARY"))
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_the_server_as_documented() {
    if !schemathesis_available() {
        if std::env::var("HUB_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("schemathesis is required (HUB_REQUIRE_TOOLS=1) but not installed: python3 -m pip install -r tests/requirements.in");
        }
        println!("SKIPPED: schemathesis is not installed (python3 -m pip install -r tests/requirements.in)");
        return;
    }
    let config = hub::Config {
        // Long enough for the whole run on a slow machine.
        access_token_lifetime: 3600,
        ..support::test_config()
    };
    let demo = support::demo_app(ANCHOR).await;
    let app = support::TestApp {
        router: hub::router(demo.store.clone(), &config),
        ..demo
    };
    // The demo user's roles read closed data and write nothing.
    let token = support::password_token(&app, "demo", "demo").await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(axum::serve(listener, app.router.clone()).into_future());
    let bearer = format!("Authorization: Bearer {token}");
    let examples =
        std::env::var("HUB_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| DEFAULT_EXAMPLES.into());
    let content_config = config_dir().join("content.toml");
    let content_config = content_config.to_str().unwrap();
    // The fuzzing passes' settings: the conformance settings or none, with small pages.
    let scratch = tempfile::tempdir().unwrap();
    let with_small_pages = |name: &str, base: &str| {
        let path = scratch.path().join(name);
        let text = base.replacen(
            "[parameters]\n",
            &format!("[parameters]\n{FUZZING_PAGE_SIZE}"),
            1,
        );
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let content_fuzzing = with_small_pages(
        "content-fuzzing.toml",
        &std::fs::read_to_string(content_config).unwrap(),
    );
    let content_robustness = with_small_pages("content-robustness.toml", "[parameters]\n");
    let timeseries_config = config_dir().join("timeseries.toml");
    let timeseries_config = timeseries_config.to_str().unwrap();
    let content = format!("{base}/swagger/v1/swagger.json");
    let timeseries = format!("{base}/v2/apispec");
    let robustness_checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance";
    let passes: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "content: conformance, coverage phase",
            &content,
            vec![
                "--config-file",
                content_config,
                "--",
                "--phases",
                "coverage",
                "-H",
                &bearer,
                "--include-path-regex",
                COVERAGE_PATHS,
                "--exclude-path-regex",
                NOT_FETCHING,
            ],
        ),
        (
            "content: conformance, fuzzing phase",
            &content,
            vec![
                "--config-file",
                &content_fuzzing,
                "--",
                "--phases",
                "fuzzing",
                "-n",
                &examples,
                "-H",
                &bearer,
                "--exclude-path-regex",
                NOT_FETCHING,
            ],
        ),
        (
            "content: robustness (anonymous, free parameters)",
            &content,
            vec![
                "--config-file",
                &content_robustness,
                "--",
                "--phases",
                "fuzzing",
                "-n",
                &examples,
                "--checks",
                robustness_checks,
                "--exclude-path-regex",
                NOT_FETCHING,
            ],
        ),
        (
            "time series: conformance",
            &timeseries,
            vec![
                "--config-file",
                timeseries_config,
                "--",
                "--phases",
                "coverage,fuzzing",
                "-n",
                &examples,
                "-H",
                &bearer,
            ],
        ),
        (
            "time series: robustness (anonymous, free parameters)",
            &timeseries,
            vec![
                "--",
                "--phases",
                "fuzzing",
                "-n",
                &examples,
                "--checks",
                robustness_checks,
            ],
        ),
    ];
    // The coverage pass checks the document against the parsers, which no backend
    // changes; on PostgreSQL (a slower store for thousands of requests) the fuzzing passes
    // check the backend for server errors and undocumented answers.
    let on_postgres = std::env::var("HUB_TEST_DATABASE").is_ok_and(|url| !url.is_empty());
    let passes: Vec<_> = passes
        .into_iter()
        .filter(|(name, _, _)| {
            let skipped = on_postgres && name.contains("coverage");
            if skipped {
                println!("== {name}: run on SQLite only");
            }
            !skipped
        })
        .collect();
    // Each schemathesis process keeps about one core busy between itself and the server,
    // so two run at once, longest first: the passes are independent (each has its own
    // working directory and seed), and CI's two cores finish them in about half the time.
    let outcomes = tokio::task::block_in_place(|| run_two_at_a_time(&passes, &base));
    let mut failed = Vec::new();
    for (name, ok, text) in outcomes {
        println!("== {name}\n{}", summary(&text));
        if !ok {
            failed.push(format!("== {name}\n{text}"));
        }
    }
    assert!(
        failed.is_empty(),
        "schemathesis found the server differing from its documents:\n{}",
        failed.join("\n")
    );
}
