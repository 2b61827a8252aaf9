//! What a condition reads of the request: the values of its condition
//! keys, taken from the request as received and routed (its headers,
//! query, connection), never from anything the operation computes later.
//! Nothing is read or copied until a condition asks, so a request to a
//! bucket whose policy has no condition pays nothing. Keys about who
//! signed are the policy's own (see [`super::Policy::evaluate`]).

use std::borrow::Cow;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use http::HeaderMap;
use http::request::Parts;

use super::key::Key;
use crate::client_address::{ClientAddr, Tls, TrustedProxies};
use crate::router::Query;

/// A key's values in a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    Absent,
    Values(Vec<Cow<'a, str>>),
    /// Not known when the decision is made: the tags of a PutObjectTagging
    /// are in its body, an object's tags are not loaded yet.
    Unknown,
}

/// The request's values for the condition keys (`Sync`: a decision's
/// context is held across the awaits of the operation that asks).
pub trait Context: Sync {
    /// The values of `key` for `action` (`GetObject`): some keys are
    /// present only for the actions AWS gives them.
    fn lookup(&self, key: &Key, action: &str) -> Lookup<'_>;
}

/// A decision about no request in particular: every key is absent.
pub struct NoRequest;

impl Context for NoRequest {
    fn lookup(&self, _: &Key, _: &str) -> Lookup<'_> {
        Lookup::Absent
    }
}

/// A request for an object seen as the listing that would show it, for
/// deciding whether its caller may learn that the object is absent (S3's
/// 404 instead of 403 goes to a caller that may list the bucket): `s3:prefix`
/// is the object's key (so a policy allowing `s3:ListBucket` on
/// `public/*` reveals absence there only), `s3:delimiter` and
/// `s3:max-keys` absent, every other key the request's own.
pub struct ListingOf<'a> {
    pub key: &'a str,
    pub request: &'a dyn Context,
}

impl Context for ListingOf<'_> {
    fn lookup(&self, key: &Key, action: &str) -> Lookup<'_> {
        match key {
            Key::Query("prefix") => values(Some(self.key)),
            Key::Query(_) => Lookup::Absent,
            other => self.request.lookup(other, action),
        }
    }
}

/// The actions whose requests carry `s3:ExistingObjectTag/<key>`: those
/// that read or change an existing object's data, ACL or tags (AWS's
/// list; not the writes that replace or delete an object).
const EXISTING_TAG_ACTIONS: [&str; 13] = [
    "GetObject",
    "GetObjectVersion",
    "GetObjectAcl",
    "GetObjectVersionAcl",
    "GetObjectTagging",
    "GetObjectVersionTagging",
    "PutObjectAcl",
    "PutObjectVersionAcl",
    "PutObjectTagging",
    "PutObjectVersionTagging",
    "DeleteObjectTagging",
    "DeleteObjectVersionTagging",
    "GetObjectAttributes",
];

/// The actions whose new tags are in the request body, read only after
/// the decision: their `s3:RequestObjectTag` keys are [`Lookup::Unknown`].
const BODY_TAG_ACTIONS: [&str; 2] = ["PutObjectTagging", "PutObjectVersionTagging"];

pub type Tags = [(String, String)];

/// What a browser form upload's fields tell beyond its headers.
#[derive(Clone, Copy)]
pub struct Form<'a> {
    /// The tags its `tagging` field sets.
    pub tags: &'a Tags,
    /// `AWS4-HMAC-SHA256` or `AWS`, as its form was signed (`None`: not).
    pub signature_version: Option<&'static str>,
}

/// A request's context, borrowed from the request.
#[derive(Clone)]
pub struct RequestContext<'a> {
    parts: &'a Parts,
    /// The headers the operation acts on: the request's, or a form
    /// upload's fields.
    headers: &'a HeaderMap,
    trusted: &'a TrustedProxies,
    form: Option<Form<'a>>,
    /// The object's tags, once loaded (see `Decision::NeedsObjectTags`).
    existing_tags: Option<&'a Tags>,
    /// The time of the decision, read once when a condition first asks.
    now: OnceLock<SystemTime>,
}

impl<'a> RequestContext<'a> {
    pub fn new(parts: &'a Parts, trusted: &'a TrustedProxies) -> Self {
        Self {
            parts,
            headers: &parts.headers,
            trusted,
            form: None,
            existing_tags: None,
            now: OnceLock::new(),
        }
    }

    /// A browser form upload's context: its fields as `headers`.
    pub fn form(
        parts: &'a Parts,
        trusted: &'a TrustedProxies,
        headers: &'a HeaderMap,
        form: Form<'a>,
    ) -> Self {
        Self {
            headers,
            form: Some(form),
            ..Self::new(parts, trusted)
        }
    }

    /// The same context, knowing the object's current tags.
    pub fn with_existing_tags<'b>(&self, tags: &'b Tags) -> RequestContext<'b>
    where
        'a: 'b,
    {
        RequestContext {
            existing_tags: Some(tags),
            ..self.clone()
        }
    }

    fn header(&self, name: &str) -> Lookup<'a> {
        let headers = self.headers;
        values(headers.get(name).and_then(|v| v.to_str().ok()))
    }

    fn query(&self, name: &str) -> Lookup<'a> {
        if self.form.is_some() {
            return Lookup::Absent;
        }
        match Query::parse(self.parts.uri.query()) {
            Ok(query) => owned(query.get(name).map(str::to_owned)),
            // The router refused it already; nothing to compare.
            Err(_) => Lookup::Absent,
        }
    }

    fn now(&self) -> SystemTime {
        *self.now.get_or_init(SystemTime::now)
    }

    /// The tags the request sets, `None` if it sets none.
    fn request_tags(&self, action: &str) -> Result<Option<Cow<'a, Tags>>, ()> {
        if let Some(form) = self.form {
            return Ok(Some(Cow::Borrowed(form.tags)));
        }
        if BODY_TAG_ACTIONS.contains(&action) {
            return Err(());
        }
        let Some(header) = self.headers.get("x-amz-tagging") else {
            return Ok(None);
        };
        let query = header.to_str().ok().map(|text| Query::parse(Some(text)));
        match query {
            Some(Ok(query)) => Ok(Some(Cow::Owned(query.pairs().to_vec()))),
            // The operation refuses it; the decision cannot read it.
            _ => Err(()),
        }
    }

    /// `s3:signatureversion` and `s3:authType`, as the request was signed.
    fn signature(&self) -> Option<(&'static str, &'static str)> {
        if let Some(form) = self.form {
            return form.signature_version.map(|version| (version, "POST"));
        }
        let query = self.parts.uri.query().unwrap_or("");
        let has = |name: &str| query.split('&').any(|p| p.split('=').next() == Some(name));
        if let Some(value) = self.parts.headers.get(http::header::AUTHORIZATION) {
            let value = value.as_bytes();
            return match value.starts_with(b"AWS4-HMAC-SHA256") {
                true => Some(("AWS4-HMAC-SHA256", "REST-HEADER")),
                false => value.starts_with(b"AWS ").then_some(("AWS", "REST-HEADER")),
            };
        }
        if has("X-Amz-Algorithm") {
            Some(("AWS4-HMAC-SHA256", "REST-QUERY-STRING"))
        } else if has("Signature") {
            Some(("AWS", "REST-QUERY-STRING"))
        } else {
            None
        }
    }
}

impl Context for RequestContext<'_> {
    fn lookup(&self, key: &Key, action: &str) -> Lookup<'_> {
        let extensions = &self.parts.extensions;
        match key {
            Key::SourceIp => owned(
                extensions
                    .get::<ClientAddr>()
                    .map(|peer| self.trusted.client(peer.0.ip(), &self.parts.headers))
                    .map(|address| address.to_string()),
            ),
            Key::SecureTransport => values(Some(if extensions.get::<Tls>().is_some() {
                "true"
            } else {
                "false"
            })),
            Key::TlsVersion => values(extensions.get::<Tls>().and_then(|tls| tls.version)),
            Key::CurrentTime => owned(Some(crate::xml::iso8601(self.now()))),
            Key::EpochTime => {
                let since = self.now().duration_since(UNIX_EPOCH).unwrap_or_default();
                owned(Some(since.as_secs().to_string()))
            }
            Key::Referer => values(
                self.parts
                    .headers
                    .get("referer")
                    .and_then(|v| v.to_str().ok()),
            ),
            Key::UserAgent => values(
                self.parts
                    .headers
                    .get("user-agent")
                    .and_then(|v| v.to_str().ok()),
            ),
            Key::Query(name) => self.query(name),
            Key::VersionId => self.query("versionId"),
            Key::Header(name) => self.header(name),
            Key::ExistingObjectTag(tag) if EXISTING_TAG_ACTIONS.contains(&action) => {
                match self.existing_tags {
                    Some(tags) => values(find(tags, tag)),
                    None => Lookup::Unknown,
                }
            }
            Key::ExistingObjectTag(_) => Lookup::Absent,
            Key::RequestObjectTag(tag) => match self.request_tags(action) {
                Ok(Some(tags)) => owned(find(&tags, tag).map(str::to_owned)),
                Ok(None) => Lookup::Absent,
                Err(()) => Lookup::Unknown,
            },
            Key::RequestObjectTagKeys => match self.request_tags(action) {
                Ok(Some(tags)) => {
                    Lookup::Values(tags.iter().map(|(k, _)| Cow::Owned(k.clone())).collect())
                }
                Ok(None) => Lookup::Absent,
                Err(()) => Lookup::Unknown,
            },
            Key::SignatureVersion => values(self.signature().map(|(version, _)| version)),
            Key::AuthType => values(self.signature().map(|(_, kind)| kind)),
            // Answered by the policy from the caller's identity.
            Key::Username | Key::Userid | Key::PrincipalArn | Key::PrincipalType => Lookup::Absent,
        }
    }
}

fn find<'t>(tags: &'t Tags, key: &str) -> Option<&'t str> {
    tags.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn values(value: Option<&str>) -> Lookup<'_> {
    match value {
        Some(value) => Lookup::Values(vec![Cow::Borrowed(value)]),
        None => Lookup::Absent,
    }
}

fn owned<'a>(value: Option<String>) -> Lookup<'a> {
    match value {
        Some(value) => Lookup::Values(vec![Cow::Owned(value)]),
        None => Lookup::Absent,
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use http::Request;

    use super::*;

    fn parts(target: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder().uri(target);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn text(lookup: Lookup<'_>) -> Option<Vec<String>> {
        match lookup {
            Lookup::Values(values) => Some(values.into_iter().map(Cow::into_owned).collect()),
            Lookup::Absent => None,
            Lookup::Unknown => Some(vec!["?".into()]),
        }
    }

    #[test]
    fn the_source_ip_is_the_client_the_access_log_records() {
        let trusted = TrustedProxies::parse(["10.0.0.0/8"]).unwrap();
        let mut request = parts("/b/k", &[("x-forwarded-for", "192.0.2.1, 203.0.113.9")]);
        let context = RequestContext::new(&request, &trusted);
        assert_eq!(text(context.lookup(&Key::SourceIp, "GetObject")), None);
        let peer: SocketAddr = "10.1.1.1:5000".parse().unwrap();
        request.extensions.insert(ClientAddr(peer));
        let context = RequestContext::new(&request, &trusted);
        assert_eq!(
            text(context.lookup(&Key::SourceIp, "GetObject")),
            Some(vec!["203.0.113.9".into()])
        );
        let nobody = TrustedProxies::default();
        let context = RequestContext::new(&request, &nobody);
        assert_eq!(
            text(context.lookup(&Key::SourceIp, "GetObject")),
            Some(vec!["10.1.1.1".into()])
        );
    }

    #[test]
    fn transport_time_and_headers() {
        let trusted = TrustedProxies::default();
        let mut request = parts(
            "/b?list-type=2&prefix=a%2Fb&max-keys=5",
            &[
                ("x-amz-acl", "private"),
                ("referer", "https://example.com/"),
                ("authorization", "AWS4-HMAC-SHA256 Credential=..."),
            ],
        );
        let get = |request: &Parts, key: Key| {
            let context = RequestContext::new(request, &trusted);
            text(context.lookup(&key, "ListBucket"))
        };
        assert_eq!(
            get(&request, Key::SecureTransport),
            Some(vec!["false".into()])
        );
        assert_eq!(get(&request, Key::TlsVersion), None);
        request.extensions.insert(Tls {
            version: Some("1.3"),
        });
        assert_eq!(
            get(&request, Key::SecureTransport),
            Some(vec!["true".into()])
        );
        assert_eq!(get(&request, Key::TlsVersion), Some(vec!["1.3".into()]));
        assert_eq!(
            get(&request, Key::Query("prefix")),
            Some(vec!["a/b".into()])
        );
        assert_eq!(
            get(&request, Key::Query("max-keys")),
            Some(vec!["5".into()])
        );
        assert_eq!(get(&request, Key::Query("delimiter")), None);
        assert_eq!(
            get(&request, Key::Header("x-amz-acl")),
            Some(vec!["private".into()])
        );
        assert_eq!(
            get(&request, Key::Referer),
            Some(vec!["https://example.com/".into()])
        );
        assert_eq!(get(&request, Key::UserAgent), None);
        assert_eq!(
            get(&request, Key::AuthType),
            Some(vec!["REST-HEADER".into()])
        );
        let presigned = parts(
            "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab",
            &[],
        );
        assert_eq!(
            get(&presigned, Key::AuthType),
            Some(vec!["REST-QUERY-STRING".into()])
        );
        let v2 = parts("/b/k?AWSAccessKeyId=A&Signature=s&Expires=1", &[]);
        assert_eq!(get(&v2, Key::SignatureVersion), Some(vec!["AWS".into()]));
        assert_eq!(get(&parts("/b/k", &[]), Key::AuthType), None);
        let context = RequestContext::new(&request, &trusted);
        let (Lookup::Values(now), Lookup::Values(epoch)) = (
            context.lookup(&Key::CurrentTime, "GetObject"),
            context.lookup(&Key::EpochTime, "GetObject"),
        ) else {
            panic!("the time is always there")
        };
        let now =
            time::OffsetDateTime::parse(&now[0], &time::format_description::well_known::Rfc3339);
        assert_eq!(now.unwrap().unix_timestamp().to_string(), epoch[0]);
    }

    #[test]
    fn tags_come_from_the_request_or_the_loaded_object() {
        let trusted = TrustedProxies::default();
        let request = parts("/b/k", &[("x-amz-tagging", "team=blue&a%20b=c")]);
        let context = RequestContext::new(&request, &trusted);
        let tag =
            |context: &RequestContext<'_>, key: Key, action| text(context.lookup(&key, action));
        let team = || Key::RequestObjectTag("team".into());
        assert_eq!(
            tag(&context, team(), "PutObject"),
            Some(vec!["blue".into()])
        );
        assert_eq!(
            tag(&context, Key::RequestObjectTagKeys, "PutObject"),
            Some(vec!["team".into(), "a b".into()])
        );
        assert_eq!(
            tag(&context, team(), "PutObjectTagging"),
            Some(vec!["?".into()]),
            "the tags are in the body, read after the decision"
        );
        let untagged = parts("/b/k", &[]);
        let plain = RequestContext::new(&untagged, &trusted);
        assert_eq!(tag(&plain, Key::RequestObjectTagKeys, "PutObject"), None);
        let existing = || Key::ExistingObjectTag("env".into());
        assert_eq!(tag(&plain, existing(), "GetObject"), Some(vec!["?".into()]));
        assert_eq!(
            tag(&plain, existing(), "DeleteObject"),
            None,
            "no such key for deletes"
        );
        let tags = [("env".to_owned(), "prod".to_owned())];
        let loaded = plain.with_existing_tags(&tags);
        assert_eq!(
            tag(&loaded, existing(), "GetObject"),
            Some(vec!["prod".into()])
        );
        assert_eq!(
            tag(&loaded, Key::ExistingObjectTag("x".into()), "GetObject"),
            None
        );
        let headers = HeaderMap::new();
        let form_tags = [("team".to_owned(), "red".to_owned())];
        let form = Form {
            tags: &form_tags,
            signature_version: Some("AWS4-HMAC-SHA256"),
        };
        let upload = RequestContext::form(&untagged, &trusted, &headers, form);
        assert_eq!(tag(&upload, team(), "PutObject"), Some(vec!["red".into()]));
        assert_eq!(
            tag(&upload, Key::AuthType, "PutObject"),
            Some(vec!["POST".into()])
        );
    }
}
