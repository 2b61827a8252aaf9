//! Conditional GET/HEAD (RFC 9110 section 13.2.2): If-Match, then
//! If-Unmodified-Since, then If-None-Match, then If-Modified-Since. A date
//! that does not parse is ignored, as RFC 9110 requires.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, header};

/// What the preconditions say about serving the object.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Proceed,
    /// 304 with validators and no body.
    NotModified,
    /// 412; names the header that failed, as AWS's `<Condition>` does.
    PreconditionFailed(&'static str),
}

#[derive(Debug, Default)]
pub struct Conditions {
    if_match: Option<String>,
    if_none_match: Option<String>,
    if_modified_since: Option<SystemTime>,
    if_unmodified_since: Option<SystemTime>,
}

impl Conditions {
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let text = |name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let date = |name| text(name).and_then(|v| httpdate::parse_http_date(&v).ok());
        Self {
            if_match: text(header::IF_MATCH),
            if_none_match: text(header::IF_NONE_MATCH),
            if_modified_since: date(header::IF_MODIFIED_SINCE),
            if_unmodified_since: date(header::IF_UNMODIFIED_SINCE),
        }
    }

    /// Evaluates against the current object (`etag` unquoted).
    pub fn evaluate(&self, etag: &str, last_modified: SystemTime) -> Outcome {
        // HTTP dates have whole seconds; compare at that resolution.
        let modified = whole_seconds(last_modified);
        match &self.if_match {
            Some(list) if !etag_list_matches(list, etag) => {
                return Outcome::PreconditionFailed("If-Match");
            }
            Some(_) => {}
            None => {
                if self
                    .if_unmodified_since
                    .is_some_and(|since| modified > since)
                {
                    return Outcome::PreconditionFailed("If-Unmodified-Since");
                }
            }
        }
        match &self.if_none_match {
            Some(list) if etag_list_matches(list, etag) => Outcome::NotModified,
            Some(_) => Outcome::Proceed,
            None if self
                .if_modified_since
                .is_some_and(|since| modified <= since) =>
            {
                Outcome::NotModified
            }
            None => Outcome::Proceed,
        }
    }
}

/// Whether an `If-Range` value still describes the object, so the range
/// may be served; otherwise the whole object is sent.
pub fn if_range_holds(value: &str, etag: &str, last_modified: SystemTime) -> bool {
    let value = value.trim();
    if value.starts_with("W/") {
        // Weak validators never satisfy If-Range (RFC 9110 13.1.5).
        return false;
    }
    if value.starts_with('"') {
        return value.trim_matches('"') == etag;
    }
    httpdate::parse_http_date(value).is_ok_and(|date| date == whole_seconds(last_modified))
}

/// `*` or a comma-separated list of (possibly weak) entity tags.
fn etag_list_matches(list: &str, etag: &str) -> bool {
    list.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.trim_start_matches("W/").trim_matches('"') == etag
    })
}

fn whole_seconds(at: SystemTime) -> SystemTime {
    let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    UNIX_EPOCH + Duration::from_secs(secs)
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    const ETAG: &str = "d41d8cd98f00b204e9800998ecf8427e";
    const BEFORE: &str = "Sat, 01 Jan 1994 00:00:00 GMT";
    const AT: &str = "Sun, 06 Nov 1994 08:49:37 GMT";
    const AFTER: &str = "Fri, 01 Jan 2100 00:00:00 GMT";

    fn modified() -> SystemTime {
        // Half a second after AT: conditions must ignore the fraction.
        httpdate::parse_http_date(AT).unwrap() + Duration::from_millis(500)
    }

    fn outcome(pairs: &[(&str, &str)]) -> Outcome {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        Conditions::from_headers(&headers).evaluate(ETAG, modified())
    }

    #[test]
    fn no_conditions_proceed() {
        assert_eq!(outcome(&[]), Outcome::Proceed);
    }

    #[test]
    fn if_match_compares_etags_and_accepts_star_and_lists() {
        assert_eq!(
            outcome(&[("if-match", &format!("\"{ETAG}\""))]),
            Outcome::Proceed
        );
        assert_eq!(outcome(&[("if-match", ETAG)]), Outcome::Proceed);
        assert_eq!(outcome(&[("if-match", "*")]), Outcome::Proceed);
        assert_eq!(
            outcome(&[("if-match", &format!("\"x\", \"{ETAG}\""))]),
            Outcome::Proceed
        );
        assert_eq!(
            outcome(&[("if-match", "\"other\"")]),
            Outcome::PreconditionFailed("If-Match")
        );
    }

    #[test]
    fn if_none_match_gives_not_modified_on_a_match() {
        assert_eq!(
            outcome(&[("if-none-match", &format!("\"{ETAG}\""))]),
            Outcome::NotModified
        );
        assert_eq!(outcome(&[("if-none-match", "*")]), Outcome::NotModified);
        assert_eq!(outcome(&[("if-none-match", "\"other\"")]), Outcome::Proceed);
    }

    #[test]
    fn dates_compare_at_second_resolution() {
        assert_eq!(outcome(&[("if-modified-since", AT)]), Outcome::NotModified);
        assert_eq!(
            outcome(&[("if-modified-since", AFTER)]),
            Outcome::NotModified
        );
        assert_eq!(outcome(&[("if-modified-since", BEFORE)]), Outcome::Proceed);
        assert_eq!(outcome(&[("if-unmodified-since", AT)]), Outcome::Proceed);
        assert_eq!(
            outcome(&[("if-unmodified-since", "Sat, 05 Nov 1994 00:00:00 GMT")]),
            Outcome::PreconditionFailed("If-Unmodified-Since")
        );
    }

    #[test]
    fn unparseable_dates_are_ignored() {
        assert_eq!(
            outcome(&[("if-modified-since", "yesterday")]),
            Outcome::Proceed
        );
        assert_eq!(
            outcome(&[("if-unmodified-since", "soon")]),
            Outcome::Proceed
        );
    }

    #[test]
    fn if_match_true_overrides_a_failing_if_unmodified_since() {
        // AWS documents exactly this pair: 200 OK.
        assert_eq!(
            outcome(&[
                ("if-match", ETAG),
                ("if-unmodified-since", "Sat, 05 Nov 1994 00:00:00 GMT")
            ]),
            Outcome::Proceed
        );
    }

    #[test]
    fn if_none_match_false_and_if_modified_since_true_is_not_modified() {
        // AWS documents this pair as 304: If-None-Match decides alone.
        assert_eq!(
            outcome(&[("if-none-match", ETAG), ("if-modified-since", BEFORE)]),
            Outcome::NotModified
        );
        // If-None-Match passing means If-Modified-Since is not consulted.
        assert_eq!(
            outcome(&[("if-none-match", "\"other\""), ("if-modified-since", AFTER)]),
            Outcome::Proceed
        );
    }

    #[test]
    fn failing_if_match_wins_over_not_modified() {
        assert_eq!(
            outcome(&[("if-match", "\"other\""), ("if-none-match", ETAG)]),
            Outcome::PreconditionFailed("If-Match")
        );
    }

    #[test]
    fn if_range_needs_a_strong_etag_or_the_exact_date() {
        let at = modified();
        assert!(if_range_holds(&format!("\"{ETAG}\""), ETAG, at));
        assert!(!if_range_holds(&format!("W/\"{ETAG}\""), ETAG, at));
        assert!(!if_range_holds("\"other\"", ETAG, at));
        assert!(if_range_holds(AT, ETAG, at));
        assert!(!if_range_holds(AFTER, ETAG, at));
        assert!(!if_range_holds("garbage", ETAG, at));
    }
}
