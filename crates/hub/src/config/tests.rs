use super::*;

#[test]
fn file_keys_override_defaults_and_typos_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hub.toml");
    std::fs::write(&file, "listen = \"0.0.0.0:9000\"\ndemo = false\n").unwrap();
    let config = Config::from_file(&file).unwrap();
    assert_eq!(config.listen.port(), 9000);
    assert!(!config.demo);
    assert_eq!(config.demo_scale, 1);
    assert_eq!(config.content_base_url(), "http://0.0.0.0:9000");
    std::fs::write(&file, "listne = \"0.0.0.0:9000\"\n").unwrap();
    assert!(Config::from_file(&file)
        .unwrap_err()
        .to_string()
        .contains("listne"));
}

/// (file text, `HUB_REALM`, command line) → realm, demo, mobility base URL.
#[test]
fn flags_win_over_environment_over_file_over_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hub.toml");
    type Case<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        &'a [&'a str],
        &'a str,
        bool,
        &'a str,
    );
    let cases: &[Case] = &[
        (None, None, &[], "hub", true, "http://127.0.0.1:8080"),
        (
            Some("realm = \"f\"\ndemo = false"),
            None,
            &[],
            "f",
            false,
            "http://127.0.0.1:8080",
        ),
        (
            Some("realm = \"f\""),
            Some("e"),
            &[],
            "e",
            true,
            "http://127.0.0.1:8080",
        ),
        (
            Some("realm = \"f\""),
            Some("e"),
            &["--realm", "c", "--no-demo"],
            "c",
            false,
            "http://127.0.0.1:8080",
        ),
        (
            None,
            Some("e"),
            &["--realm", "c"],
            "c",
            true,
            "http://127.0.0.1:8080",
        ),
        (
            Some("mobility_base_url = \"http://f/\""),
            None,
            &[],
            "hub",
            true,
            "http://f",
        ),
        (
            Some("mobility_base_url = \"http://f\""),
            None,
            &["--mobility-base-url", "http://c"],
            "hub",
            true,
            "http://c",
        ),
        (
            None,
            None,
            &["--listen", "0.0.0.0:1"],
            "hub",
            true,
            "http://0.0.0.0:1",
        ),
    ];
    // The only test of the crate that sets a variable; `Default` ignores variables.
    for (text, env, flags, realm, demo, mobility) in cases {
        match env {
            Some(value) => std::env::set_var("HUB_REALM", value),
            None => std::env::remove_var("HUB_REALM"),
        }
        if let Some(text) = text {
            std::fs::write(&file, text).unwrap();
        }
        let args = std::iter::once("hub").chain(flags.iter().copied());
        let matches = Config::declared().try_get_matches_from(args).unwrap();
        let config = Config::resolve(&matches, text.map(|_| file.as_path())).unwrap();
        let case = format!("{text:?} {env:?} {flags:?}");
        assert_eq!(config.realm, *realm, "{case}");
        assert_eq!(config.demo, *demo, "{case}");
        assert_eq!(config.mobility_base_url(), *mobility, "{case}");
    }
    std::env::remove_var("HUB_REALM");
}

/// Cells of the README's configuration table (`\|` is a pipe inside a cell).
fn readme_rows() -> Vec<Vec<String>> {
    let readme = include_str!("../../../../README.md");
    let table = readme
        .split("| flag | environment | config key | default |")
        .nth(1)
        .expect("README has the configuration table");
    table
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.replace("\\|", "\u{0}")
                .trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().replace('\u{0}', "|").replace('`', ""))
                .collect()
        })
        .collect()
}

#[test]
fn readme_table_matches_the_declaration_both_ways() {
    let declared = Config::declared();
    let rows = readme_rows();
    for row in &rows {
        let flag = row[0].split_whitespace().next().unwrap();
        if flag == "--config" {
            // The file itself: declared by the binary's `Cli`, not a key of it.
            assert_eq!((row[1].as_str(), row[2].as_str()), ("HUB_CONFIG", ""));
            continue;
        }
        let arg = declared
            .get_arguments()
            .find(|a| a.get_long().map(|l| format!("--{l}")).as_deref() == Some(flag))
            .unwrap_or_else(|| panic!("README row {flag} is not declared"));
        let env = arg.get_env().and_then(|e| e.to_str());
        assert_eq!(env, Some(row[1].as_str()), "{flag}: variable");
        let id = arg.get_id().as_str();
        let defaults: Vec<_> = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_str().unwrap())
            .collect();
        match row[2].strip_suffix(" = false") {
            // A negating flag: `--no-x` sets the file key `x` to false.
            Some(key) => assert_eq!(id, format!("no_{key}"), "{flag}: key"),
            None => {
                assert_eq!(id, row[2], "{flag}: key");
                match defaults.as_slice() {
                    [default] => assert_eq!(*default, row[3], "{flag}: default"),
                    _ => assert!(
                        row[3].starts_with("none") || row[3].contains('{'),
                        "{flag}: README names a default {:?} the declaration lacks",
                        row[3]
                    ),
                }
            }
        }
    }
    for arg in declared.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == "help" {
            continue;
        }
        assert!(
            rows.iter()
                .any(|r| r[0].split_whitespace().next() == Some(&format!("--{long}"))),
            "--{long} is declared but missing from README's table"
        );
    }
}

/// `--database-shared-connections` and its file key reach the PostgreSQL settings; unset,
/// the machine's cores decide; a count outside 0–500 is refused, naming the flag.
#[test]
fn shared_connections_come_from_flag_or_file_and_default_to_the_cores() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hub.toml");
    std::fs::write(&file, "database_shared_connections = 3\n").unwrap();
    let resolve = |flags: &[&str], file: Option<&std::path::Path>| {
        let args = std::iter::once("hub").chain(flags.iter().copied());
        let matches = Config::declared().try_get_matches_from(args)?;
        Ok::<_, anyhow::Error>(Config::resolve(&matches, file)?.postgres_settings())
    };
    let cases: &[(&[&str], Option<&std::path::Path>, usize)] = &[
        (
            &[],
            None,
            hub_store::postgres::shared_connections_for_cores(),
        ),
        (&[], Some(&file), 3),
        (&["--database-shared-connections", "0"], Some(&file), 0),
        (&["--database-shared-connections", "500"], None, 500),
    ];
    for (flags, file, shared) in cases {
        let settings = resolve(flags, *file).unwrap();
        assert_eq!(settings.shared_connections, *shared, "{flags:?} {file:?}");
    }
    let refused = resolve(&["--database-shared-connections", "501"], None)
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("--database-shared-connections"),
        "{refused}"
    );
    // The file keeps the flags' limits.
    for (text, key) in [
        (
            "database_shared_connections = 501\n",
            "database_shared_connections",
        ),
        ("database_pool_size = 0\n", "database_pool_size"),
    ] {
        std::fs::write(&file, text).unwrap();
        let refused = resolve(&[], Some(&file)).unwrap_err().to_string();
        assert!(refused.contains(key), "{text}: {refused}");
    }
}
