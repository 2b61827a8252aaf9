//! The documentation says what the binary does: the settings table in
//! README.md and docs/configuration.md is the one the declaration renders
//! (`S3GW_UPDATE_DOCS=1 cargo test -p s3-gateway --test docs` rewrites it),
//! and every TOML example in them loads as the gateway loads it. (The shell
//! examples are run by conformance-tests/test_doc_examples.py.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use s3_gateway::config::settings::{self, SETTINGS};
use s3_gateway::config::{Config, ServeArgs};
use s3_gateway::credentials_file;

const DOCS: [&str; 3] = ["README.md", "docs/configuration.md", "docs/operations.md"];

fn doc_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file)
}

/// The ```toml blocks of a doc, each with the line it starts on.
fn toml_blocks(file: &str) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(doc_path(file)).expect("read the doc");
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (number, line) in text.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```toml") => current = Some((number + 2, String::new())),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some((_, block)), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

const KEYS_FILE: &str = "[[keys]]\nname = \"doc\"\naccess_key = \"S3GWDOCEXAMPLE000001\"\nsecret_key = \"docexampledocexampledocexampledocexample\"\n";

/// Loads a gateway.toml example as the gateway would, with a real keys
/// file where it names one (the paths it names do not exist here).
fn load_config_example(text: &str) -> Result<Config, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, text).expect("write");
    // The keys file and the Ozone example's system secret, readable by
    // their owner only.
    let keys_file = dir.path().join("keys.toml");
    std::fs::write(&keys_file, KEYS_FILE).expect("write");
    let secret = dir.path().join("ozone-system-secret");
    std::fs::write(&secret, "example-secret\n").expect("write");
    // And its records key.
    let records_key = dir.path().join("records.key");
    std::fs::write(
        &records_key,
        "an-example-records-key-of-32-characters-or-more
",
    )
    .expect("write");
    for file in [&keys_file, &secret, &records_key] {
        std::fs::set_permissions(file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .expect("chmod");
    }
    let table: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
    let absolute_credentials = table
        .get("credentials")
        .and_then(|v| v.as_str())
        .is_some_and(|path| Path::new(path).is_absolute());
    let keys = dir.path().join("keys.toml").display().to_string();
    Config::load_from(&ServeArgs::config(&config), move |name| {
        (name == "S3GW_CREDENTIALS" && absolute_credentials).then(|| keys.clone())
    })
    .map_err(|e| e.to_string())
}

#[test]
fn every_toml_example_loads() {
    let mut checked = 0;
    for file in DOCS {
        for (line, block) in toml_blocks(file) {
            let outcome = if block.contains("[[keys]]") {
                let keys = tempfile::NamedTempFile::new().expect("temp file");
                std::fs::write(keys.path(), &block).expect("write");
                credentials_file::load(keys.path())
                    .map(drop)
                    .map_err(|e| e.to_string())
            } else {
                load_config_example(&block).map(drop)
            };
            if let Err(e) = outcome {
                panic!("{file}:{line}: the example does not load: {e}\n{block}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} TOML examples found");
}

#[test]
fn the_configuration_examples_name_every_setting() {
    let named: BTreeSet<String> = toml_blocks("docs/configuration.md")
        .into_iter()
        .filter(|(_, block)| !block.contains("[[keys]]"))
        .flat_map(|(_, block)| {
            let table: toml::Table = toml::from_str(&block).expect("TOML");
            table.into_iter().map(|(key, _)| key)
        })
        .collect();
    let declared: BTreeSet<String> = SETTINGS.iter().map(|s| s.key.to_owned()).collect();
    assert_eq!(named, declared);
}

const START: &str = "<!-- The settings table: generated from";
const END: &str = "<!-- end of the settings table -->";

fn check_table(file: &str) {
    let path = doc_path(file);
    let text = std::fs::read_to_string(&path).expect("read the doc");
    let start = text
        .find(START)
        .unwrap_or_else(|| panic!("{file} has no settings table marker"));
    let body_start = start + text[start..].find('\n').expect("marker line") + 1;
    let body_end = body_start
        + text[body_start..]
            .find(END)
            .unwrap_or_else(|| panic!("{file} has no end marker"));
    let table = settings::markdown_table();
    if text[body_start..body_end] == table {
        return;
    }
    if std::env::var_os("S3GW_UPDATE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &text[..body_start], &text[body_end..]);
        std::fs::write(&path, updated).expect("rewrite the doc");
        return;
    }
    panic!(
        "{file}'s settings table differs from the declaration; rerun with S3GW_UPDATE_DOCS=1 to rewrite it:\n{table}"
    );
}

#[test]
fn readme_settings_table_is_the_declarations() {
    check_table("README.md");
}

#[test]
fn configuration_guide_settings_table_is_the_declarations() {
    check_table("docs/configuration.md");
}
