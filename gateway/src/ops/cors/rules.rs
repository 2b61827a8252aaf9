//! A bucket's CORS configuration: the `CORSConfiguration` document, checked
//! as AWS checks it, and the rule a cross-origin request matches.
//!
//! The stored form is the canonical XML rendered here, which is also what
//! GetBucketCors answers, so a stored document always parses.

use serde::{Deserialize, Serialize};

use crate::error::{S3Error, S3Result};
use crate::xml::{self, S3_NAMESPACE};

/// AWS allows at most 100 rules in one configuration.
pub const MAX_RULES: usize = 100;

/// The methods a CORS rule may allow (AWS refuses any other).
const METHODS: [&str; 5] = ["GET", "PUT", "POST", "DELETE", "HEAD"];

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CorsConfiguration {
    #[serde(rename = "@xmlns", skip_deserializing)]
    pub xmlns: &'static str,
    #[serde(rename = "CORSRule", default)]
    pub rules: Vec<CorsRule>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CorsRule {
    #[serde(rename = "ID", default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "AllowedHeader", default)]
    pub allowed_headers: Vec<String>,
    #[serde(rename = "AllowedMethod", default)]
    pub allowed_methods: Vec<String>,
    #[serde(rename = "AllowedOrigin", default)]
    pub allowed_origins: Vec<String>,
    #[serde(rename = "ExposeHeader", default)]
    pub expose_headers: Vec<String>,
    #[serde(
        rename = "MaxAgeSeconds",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_age_seconds: Option<u32>,
}

/// What a cross-origin request asks for: its origin, its method (for a
/// preflight, `Access-Control-Request-Method`) and, for a preflight, the
/// headers it means to send.
pub struct CorsRequest<'a> {
    pub origin: &'a str,
    pub method: &'a str,
    pub headers: Vec<&'a str>,
}

impl CorsConfiguration {
    /// Parses and checks a PutBucketCors body.
    pub fn from_request_body(body: &[u8]) -> S3Result<Self> {
        let mut config: Self = xml::from_xml(body)?;
        config.xmlns = S3_NAMESPACE;
        config.validate()?;
        Ok(config)
    }

    /// Parses a document this module stored.
    pub fn from_stored(document: &[u8]) -> S3Result<Self> {
        let mut config: Self = xml::from_xml(document)
            .map_err(|_| S3Error::internal("the stored CORS configuration does not parse"))?;
        config.xmlns = S3_NAMESPACE;
        Ok(config)
    }

    /// The canonical XML kept in storage and answered by GetBucketCors.
    pub fn to_document(&self) -> S3Result<String> {
        xml::to_xml("CORSConfiguration", self)
    }

    fn validate(&self) -> S3Result<()> {
        if self.rules.is_empty() || self.rules.len() > MAX_RULES {
            return Err(S3Error::malformed_xml());
        }
        for rule in &self.rules {
            if rule.allowed_methods.is_empty() || rule.allowed_origins.is_empty() {
                return Err(S3Error::malformed_xml());
            }
            if let Some(method) = rule
                .allowed_methods
                .iter()
                .find(|m| !METHODS.contains(&m.as_str()))
            {
                return Err(S3Error::invalid_request(format!(
                    "Found unsupported HTTP method in CORS config. Unsupported method is {method}"
                )));
            }
            for (what, patterns) in [
                ("AllowedOrigin", &rule.allowed_origins),
                ("AllowedHeader", &rule.allowed_headers),
            ] {
                if let Some(pattern) = patterns.iter().find(|p| p.matches('*').count() > 1) {
                    return Err(S3Error::invalid_request(format!(
                        "{what} \"{pattern}\" can not have more than one wildcard."
                    )));
                }
            }
            if rule.id.as_ref().is_some_and(|id| id.chars().count() > 255) {
                return Err(S3Error::invalid_argument(
                    "The ID of a CORS rule must be at most 255 characters",
                ));
            }
        }
        Ok(())
    }

    /// The first rule that allows the request, as AWS evaluates them.
    pub fn matching_rule(&self, request: &CorsRequest<'_>) -> Option<&CorsRule> {
        self.rules.iter().find(|rule| rule.allows(request))
    }
}

impl CorsRule {
    fn allows(&self, request: &CorsRequest<'_>) -> bool {
        self.allowed_origins
            .iter()
            .any(|pattern| wildcard_match(pattern, request.origin))
            && self.allowed_methods.iter().any(|m| m == request.method)
            && request.headers.iter().all(|header| {
                self.allowed_headers
                    .iter()
                    .any(|pattern| wildcard_match(&pattern.to_ascii_lowercase(), header))
            })
    }

    /// Whether the rule allows every origin, so the answer is `*` and no
    /// credentials are allowed.
    pub fn any_origin(&self) -> bool {
        self.allowed_origins.iter().any(|origin| origin == "*")
    }
}

/// `pattern` holds at most one `*`, which stands for any run of characters.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.len() >= head.len() + tail.len() && text.starts_with(head) && text.ends_with(tail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
 <CORSRule>
   <AllowedOrigin>http://www.example.com</AllowedOrigin>
   <AllowedMethod>PUT</AllowedMethod>
   <AllowedMethod>POST</AllowedMethod>
   <AllowedMethod>DELETE</AllowedMethod>
   <AllowedHeader>*</AllowedHeader>
   <MaxAgeSeconds>3000</MaxAgeSeconds>
   <ExposeHeader>x-amz-server-side-encryption</ExposeHeader>
 </CORSRule>
 <CORSRule>
   <ID>any-get</ID>
   <AllowedOrigin>*</AllowedOrigin>
   <AllowedMethod>GET</AllowedMethod>
 </CORSRule>
</CORSConfiguration>"#;

    fn request<'a>(origin: &'a str, method: &'a str, headers: &[&'a str]) -> CorsRequest<'a> {
        CorsRequest {
            origin,
            method,
            headers: headers.to_vec(),
        }
    }

    #[test]
    fn the_aws_example_parses_and_round_trips() {
        let config = CorsConfiguration::from_request_body(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(config.rules.len(), 2);
        assert_eq!(config.rules[0].allowed_methods, ["PUT", "POST", "DELETE"]);
        assert_eq!(config.rules[0].max_age_seconds, Some(3000));
        assert_eq!(config.rules[1].id.as_deref(), Some("any-get"));
        let document = config.to_document().unwrap();
        assert_eq!(
            CorsConfiguration::from_stored(document.as_bytes()).unwrap(),
            config
        );
    }

    #[test]
    fn text_that_needs_escaping_survives_the_stored_form() {
        let body = "<CORSConfiguration><CORSRule><ID>a &amp; &lt;b&gt; \"c\" 'd'</ID>\
            <AllowedOrigin>https://x.test</AllowedOrigin><AllowedMethod>GET</AllowedMethod>\
            <ExposeHeader>x-&#233;</ExposeHeader></CORSRule></CORSConfiguration>";
        let config = CorsConfiguration::from_request_body(body.as_bytes()).unwrap();
        assert_eq!(config.rules[0].id.as_deref(), Some("a & <b> \"c\" 'd'"));
        let stored = config.to_document().unwrap();
        assert_eq!(
            CorsConfiguration::from_stored(stored.as_bytes()).unwrap(),
            config
        );
    }

    #[test]
    fn rules_match_origin_method_and_headers() {
        let config = CorsConfiguration::from_request_body(EXAMPLE.as_bytes()).unwrap();
        let put = request("http://www.example.com", "PUT", &["content-type"]);
        assert_eq!(config.matching_rule(&put), Some(&config.rules[0]));
        let get = request("http://other.org", "GET", &[]);
        assert_eq!(config.matching_rule(&get), Some(&config.rules[1]));
        assert!(config.rules[1].any_origin());
        // GET from anywhere, but no header may be asked for in that rule.
        assert!(
            config
                .matching_rule(&request("http://other.org", "GET", &["x-custom"]))
                .is_none()
        );
        assert!(
            config
                .matching_rule(&request("http://other.org", "PUT", &[]))
                .is_none()
        );
    }

    #[test]
    fn one_wildcard_stands_for_any_run_of_characters() {
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("*.example.com", "https://a.example.com"));
        assert!(wildcard_match(
            "https://*.example.com",
            "https://a.b.example.com"
        ));
        assert!(!wildcard_match(
            "https://*.example.com",
            "https://example.com"
        ));
        assert!(wildcard_match("x-amz-*", "x-amz-meta-a"));
        assert!(!wildcard_match("ab*ba", "aba"));
        assert!(!wildcard_match("http://a.com", "http://a.com.evil"));
    }

    #[test]
    fn bad_configurations_are_refused_as_aws_refuses_them() {
        let rule = |body: &str| {
            format!("<CORSConfiguration><CORSRule>{body}</CORSRule></CORSConfiguration>")
        };
        let cases = [
            (
                "<CORSConfiguration></CORSConfiguration>".to_owned(),
                "MalformedXML",
            ),
            (rule("<AllowedMethod>GET</AllowedMethod>"), "MalformedXML"),
            (rule("<AllowedOrigin>*</AllowedOrigin>"), "MalformedXML"),
            (
                rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>"),
                "InvalidRequest",
            ),
            (
                rule("<AllowedOrigin>*.a.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"),
                "InvalidRequest",
            ),
            (
                rule(
                    "<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>**</AllowedHeader>",
                ),
                "InvalidRequest",
            ),
            (
                rule(
                    "<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>x</MaxAgeSeconds>",
                ),
                "MalformedXML",
            ),
            ("not xml".to_owned(), "MalformedXML"),
        ];
        for (body, code) in cases {
            let err = CorsConfiguration::from_request_body(body.as_bytes()).unwrap_err();
            assert_eq!(err.code, code, "{body}");
        }
        let many = format!(
            "<CORSConfiguration>{}</CORSConfiguration>",
            "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>"
                .repeat(MAX_RULES + 1)
        );
        assert_eq!(
            CorsConfiguration::from_request_body(many.as_bytes())
                .unwrap_err()
                .code,
            "MalformedXML"
        );
    }
}
