//! The documentation says what the binary does: the settings table in
//! README.md and docs/configuration.md is the one the declaration renders
//! (`S3GW_UPDATE_DOCS=1 cargo test -p s3-gateway --test docs` rewrites it),
//! and every TOML example in them loads as the gateway loads it. (The shell
//! examples are run by conformance-tests/test_doc_examples.py.) And
//! docs/architecture.md's source map of storage-client cannot drift from
//! the files: it names every one, and every file it names exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use s3_gateway::config::settings;
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
    // And the TLS example's CA certificate (read at start, parsed at connect).
    let ca = dir.path().join("ozone-ca.pem");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n",
    )
    .expect("write");
    // And the SSE-S3 keyring.
    let sse_keys = dir.path().join("sse-master.keys");
    std::fs::write(
        &sse_keys,
        "k1 q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=\n",
    )
    .expect("write");
    for file in [&keys_file, &secret, &records_key, &sse_keys] {
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

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// How the source map names a file: `mod.rs` by its folder (`cache/`),
/// any other by its name. Unit-test files (`tests.rs`, `*_tests.rs`,
/// `*_vectors.rs`) go with the module they test and are not named.
fn map_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".rs")?;
    if stem == "tests" || stem.ends_with("_tests") || stem.ends_with("_vectors") {
        return None;
    }
    if name == "mod.rs" {
        let folder = path.parent()?.file_name()?.to_str()?;
        return Some(format!("{folder}/"));
    }
    Some(name.to_owned())
}

#[test]
fn the_architecture_source_map_names_every_storage_file_and_only_real_ones() {
    let map = std::fs::read_to_string(doc_path("docs/architecture.md")).expect("architecture.md");
    let mut files = Vec::new();
    rust_files(&doc_path("storage-client/src"), &mut files);
    let unnamed: BTreeSet<String> = files
        .iter()
        .filter_map(|path| map_name(path))
        .filter(|name| !map.contains(name.as_str()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "docs/architecture.md's source map does not name {unnamed:?}"
    );

    let mut every_file = BTreeSet::new();
    let sources = [
        "gateway/src",
        "gateway/tests",
        "gateway/benches",
        "storage-client/src",
        "storage-client/tests",
        "bench/src",
        "fuzz/fuzz_targets",
    ];
    for dir in sources.into_iter().map(doc_path).filter(|dir| dir.is_dir()) {
        let mut found = Vec::new();
        rust_files(&dir, &mut found);
        every_file.extend(
            found
                .iter()
                .filter_map(|p| p.file_name()?.to_str().map(str::to_owned)),
        );
    }
    // Build scripts sit beside their crate's sources.
    for crate_dir in ["gateway", "storage-client", "bench", "fuzz"] {
        if doc_path(crate_dir).join("build.rs").is_file() {
            every_file.insert("build.rs".to_owned());
        }
    }
    let stale: BTreeSet<&str> = map
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|word| word.len() > 3 && word.ends_with(".rs"))
        .filter(|name| !every_file.contains(*name))
        .collect();
    assert!(
        stale.is_empty(),
        "docs/architecture.md names files that do not exist: {stale:?}"
    );
}
