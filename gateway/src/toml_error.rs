//! TOML parse errors as one line for stderr: the line they are on and the
//! text they point at (a duplicate key's name), which TOML's own message,
//! spanning lines, leaves out. The configuration and credentials files share it.

/// A TOML parse error in one line, with the line it is on and the text it
/// points at (a duplicate key's name), since TOML's own message can span
/// lines and names neither.
pub fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = one_line(error.message());
    let Some(span) = error.span() else {
        return message;
    };
    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
    let snippet = text.get(span.clone()).unwrap_or("").trim();
    if snippet.is_empty() || snippet.contains('\n') || snippet.len() > 80 {
        format!("line {line}: {message}")
    } else {
        format!("line {line}: {message} `{snippet}`")
    }
}

/// TOML parse messages can span lines; stderr gets one.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
