//! The console's static files, built into the binary (no CDN: it works
//! offline and what is served is what was reviewed).

/// The file at `name` (under `/_s3gw/console/`) and its content type.
pub fn asset(name: &str) -> Option<(&'static str, &'static [u8])> {
    Some(match name {
        "" | "index.html" => (
            "text/html; charset=utf-8",
            include_bytes!("../../console/index.html"),
        ),
        "app.js" => (
            "text/javascript; charset=utf-8",
            include_bytes!("../../console/app.js"),
        ),
        "app.css" => (
            "text/css; charset=utf-8",
            include_bytes!("../../console/app.css"),
        ),
        _ => return None,
    })
}
