//! The documentation says what the binary does: the settings table in
//! README.md and docs/configuration.md is the one the declaration renders
//! (`S3GW_UPDATE_DOCS=1 cargo test -p s3-gateway --test docs` rewrites it).

use std::path::Path;

use s3_gateway::config::settings;

const START: &str = "<!-- The settings table: generated from";
const END: &str = "<!-- end of the settings table -->";

fn check_table(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
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
