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
    // Named already (an unknown field's message names it), or unreadable.
    if snippet.is_empty()
        || snippet.contains('\n')
        || snippet.len() > 80
        || message.contains(&format!("`{snippet}`"))
    {
        format!("line {line}: {message}")
    } else {
        format!("line {line}: {message} `{snippet}`")
    }
}

/// TOML parse messages can span lines; stderr gets one.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // only parsed
    struct Key {
        name: String,
    }

    fn error_of(text: &str) -> String {
        let error = toml::from_str::<Key>(text).unwrap_err();
        toml_error(text, &error)
    }

    #[test]
    fn an_unknown_field_is_named_once() {
        let message = error_of("name = \"a\"\nnmae = \"b\"\n");
        assert!(
            message.starts_with("line 2: unknown field `nmae`"),
            "{message}"
        );
        assert_eq!(message.matches("nmae").count(), 1, "{message}");
    }

    #[test]
    fn a_duplicate_key_is_pointed_at() {
        let message = error_of("name = \"a\"\nname = \"b\"\n");
        assert!(message.starts_with("line 2: "), "{message}");
        assert!(message.ends_with("`name`"), "{message}");
    }
}
