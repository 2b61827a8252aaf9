//! The web console (docs/console.md), off unless `console` is set: static
//! pages built into the binary under `/_s3gw/console/`, a sign-in that
//! turns an access key and secret into a server-side session, and a proxy
//! that signs each of the page's S3 (and admin) requests as the session's
//! key and hands it to the same handler the S3 listener uses. Every
//! decision is therefore S3's: the console adds no rights.
//!
//! - `GET /_s3gw/console/` (and `app.js`, `app.css`): the page
//! - `POST /_s3gw/console/api/session` `{"access_key", "secret_key"}`: sign in
//! - `GET` / `DELETE /_s3gw/console/api/session`: who is signed in / sign out
//! - `POST /_s3gw/console/api/presign` `{"bucket", "key", "expires", "download", "version_id"}`
//! - `/_s3gw/console/s3/PATH?QUERY`: S3's `/PATH?QUERY` as the session's key
//! - `/_s3gw/console/admin/PATH`: the admin API's `/_s3gw/admin/PATH` likewise
//!   (a key deleted or rotated there ends that key's sessions here)
//!
//! Every API request needs the session cookie and its CSRF token in
//! `X-CSRF-Token` (whatever its method), and is refused if the browser
//! says it comes from another origin.

mod assets;
mod session;
mod sign;

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures::future::BoxFuture;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use serde::Deserialize;

use crate::auth::encoding;
use crate::client_address::ClientAddr;
use crate::config::ConsoleSettings;
use crate::error::S3Error;
use crate::host;

use session::{Session, Sessions, csrf_matches};

const ROOT: &str = "/_s3gw/console";
const COOKIE: &str = "s3gw_console";
const CSRF_HEADER: &str = "x-csrf-token";
/// A proxied S3 answer's own `Cache-Control`, renamed.
const OBJECT_CACHE_CONTROL: HeaderName = HeaderName::from_static("x-s3gw-cache-control");
/// The longest a presigned URL may live: S3's own limit.
const MAX_EXPIRY: u64 = 7 * 24 * 3600;
/// The largest sign-in or presign request body.
const MAX_JSON: usize = 16 * 1024;

/// The console's pages: nothing but its own files, never framed.
const PAGE_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     form-action 'self'; base-uri 'none'";
/// A proxied S3 answer (an object's bytes among them) never runs as a page.
const PROXY_CSP: &str = "sandbox; default-src 'none'; frame-ancestors 'none'";
/// S3's own answers while the console is on: an HTML object opened from
/// this origin runs in an opaque origin, never as the console's.
const S3_CSP: &str = "sandbox allow-scripts allow-forms allow-popups allow-downloads allow-modals";

/// Hands a request to the gateway's S3 and admin handler, in process.
pub type Dispatch<'a> =
    dyn Fn(Parts, Body) -> BoxFuture<'a, Result<Response, S3Error>> + Send + Sync + 'a;

pub struct Console {
    sessions: Sessions,
    /// Whether the listener serves TLS: the cookie is then `Secure`.
    secure: bool,
    region: String,
    domain: Option<String>,
}

/// A console refusal, answered as JSON `{"code", "message"}`.
struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn into_response(self) -> Response {
        let body = serde_json::json!({"code": self.code, "message": self.message});
        json_response(self.status, &body)
    }
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[derive(Deserialize)]
struct SignIn {
    access_key: String,
    secret_key: String,
}

#[derive(Deserialize)]
struct Presign {
    bucket: String,
    key: String,
    expires: u64,
    #[serde(default)]
    download: bool,
    /// A version of the object other than its latest.
    #[serde(default)]
    version_id: Option<String>,
}

impl Console {
    pub fn new(
        settings: ConsoleSettings,
        secure: bool,
        region: String,
        domain: Option<String>,
    ) -> Self {
        Self {
            sessions: Sessions::new(settings.idle, settings.max),
            secure,
            region,
            domain,
        }
    }

    /// Whether the request is the console's: under `/_s3gw/console`, where
    /// the admin API would answer (never a virtual-hosted bucket's key).
    pub fn claims(&self, parts: &Parts) -> bool {
        let path = parts.uri.path();
        (path == ROOT || path.starts_with("/_s3gw/console/"))
            && crate::admin::api::is_admin_request(parts, self.domain.as_deref())
    }

    /// Answers a console request; every answer carries the console's
    /// security headers.
    pub async fn serve(&self, parts: &Parts, body: Body, dispatch: &Dispatch<'_>) -> Response {
        let mut response = match self.route(parts, body, dispatch).await {
            Ok(response) => response,
            Err(refusal) => refusal.into_response(),
        };
        let headers = response.headers_mut();
        if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PAGE_CSP),
            );
        }
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// Marks an S3 answer served while the console is on (see [`S3_CSP`]).
    pub fn sandbox(response: &mut Response) {
        response
            .headers_mut()
            .entry(header::CONTENT_SECURITY_POLICY)
            .or_insert(HeaderValue::from_static(S3_CSP));
    }

    async fn route(
        &self,
        parts: &Parts,
        body: Body,
        dispatch: &Dispatch<'_>,
    ) -> Result<Response, Refusal> {
        let rest = parts.uri.path().strip_prefix(ROOT).unwrap_or("");
        if rest.is_empty() {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
            response.headers_mut().insert(
                header::LOCATION,
                HeaderValue::from_static("/_s3gw/console/"),
            );
            return Ok(response);
        }
        if let Some(target) = rest.strip_prefix("/s3")
            && (target.is_empty() || target.starts_with('/'))
        {
            let target = if target.is_empty() { "/" } else { target };
            return self.proxy(parts, body, target, dispatch).await;
        }
        if let Some(target) = rest.strip_prefix("/admin/") {
            let target = format!("/_s3gw/admin/{target}");
            return self.proxy(parts, body, &target, dispatch).await;
        }
        match rest {
            "/api/session" => {
                same_origin(parts)?;
                match parts.method {
                    Method::POST => self.sign_in(parts, body, dispatch).await,
                    Method::GET => {
                        let (_, session) = self.session(parts)?;
                        Ok(signed_in(&session))
                    }
                    Method::DELETE => {
                        let (id, _) = self.session(parts)?;
                        self.sessions.remove(&id);
                        let mut response = Response::new(Body::empty());
                        *response.status_mut() = StatusCode::NO_CONTENT;
                        Ok(with_cookie(response, &self.cookie("", 0)))
                    }
                    _ => Err(not_allowed()),
                }
            }
            "/api/presign" => {
                if parts.method != Method::POST {
                    return Err(not_allowed());
                }
                self.presign(parts, body).await
            }
            name => {
                let name = name.strip_prefix('/').unwrap_or(name);
                match (&parts.method, assets::asset(name)) {
                    (&Method::GET | &Method::HEAD, Some((content_type, bytes))) => {
                        let mut response = Response::new(Body::from(bytes));
                        response
                            .headers_mut()
                            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
                        Ok(response)
                    }
                    _ => Err(Refusal::new(
                        StatusCode::NOT_FOUND,
                        "NotFound",
                        "The console has no such page.",
                    )),
                }
            }
        }
    }

    /// The cookie naming session `id` (empty with age 0: removed).
    fn cookie(&self, id: &str, max_age: u64) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!("{COOKIE}={id}; Path={ROOT}/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
    }

    /// The request's live session by its cookie, with its id.
    fn session(&self, parts: &Parts) -> Result<(String, Session), Refusal> {
        cookie_values(&parts.headers)
            .into_iter()
            .find_map(|id| self.sessions.get(&id).map(|session| (id, session)))
            .ok_or_else(no_session)
    }

    /// The session of an API request from this origin that carries its
    /// CSRF token.
    fn authenticated(&self, parts: &Parts) -> Result<(String, Session), Refusal> {
        same_origin(parts)?;
        let (id, session) = self.session(parts)?;
        let token = parts
            .headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !csrf_matches(&session, token) {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                "InvalidCsrfToken",
                "The request does not carry the session's X-CSRF-Token.",
            ));
        }
        Ok((id, session))
    }

    async fn sign_in(
        &self,
        parts: &Parts,
        body: Body,
        dispatch: &Dispatch<'_>,
    ) -> Result<Response, Refusal> {
        let form: SignIn = read_json(parts, body).await?;
        let bad = |what: &str| {
            Refusal::new(
                StatusCode::BAD_REQUEST,
                "InvalidSignIn",
                format!("The {what} is missing or too long."),
            )
        };
        if form.access_key.is_empty() || form.access_key.len() > 128 {
            return Err(bad("access key"));
        }
        if form.secret_key.is_empty() || form.secret_key.len() > 256 {
            return Err(bad("secret key"));
        }
        // Whatever session the browser had ends: a sign-in always gets a
        // new id, so an id planted before it is worth nothing after.
        for old in cookie_values(&parts.headers) {
            self.sessions.remove(&old);
        }
        let candidate = Session {
            access_key: form.access_key,
            secret_key: form.secret_key,
            csrf_token: String::new(),
        };
        // The key proves itself the way every console action will: a
        // signed S3 request (ListBuckets), checked by S3's verifier.
        let request = self.signed(parts, &candidate, &Method::GET, "/", "", &HeaderMap::new())?;
        match dispatch(request, Body::empty()).await {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => {
                return Err(Refusal::new(
                    StatusCode::FORBIDDEN,
                    "SignInRefused",
                    format!("The gateway answered {} to the key.", response.status()),
                ));
            }
            Err(error) if error.status == StatusCode::FORBIDDEN => {
                return Err(Refusal::new(
                    StatusCode::FORBIDDEN,
                    "SignInRefused",
                    "The access key or secret key is wrong.",
                ));
            }
            Err(error) => {
                return Err(Refusal::new(error.status, error.code, error.message));
            }
        }
        let (id, session) = self
            .sessions
            .create(&candidate.access_key, &candidate.secret_key)
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "TooManySessions",
                    "This gateway holds as many console sessions as it may; try again later.",
                )
            })?;
        let max_age = self.sessions.max().as_secs();
        Ok(with_cookie(signed_in(&session), &self.cookie(&id, max_age)))
    }

    async fn presign(&self, parts: &Parts, body: Body) -> Result<Response, Refusal> {
        let (_, session) = self.authenticated(parts)?;
        let form: Presign = read_json(parts, body).await?;
        if !(1..=MAX_EXPIRY).contains(&form.expires) {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "InvalidExpiry",
                format!("The expiry must be 1 to {MAX_EXPIRY} seconds (7 days)."),
            ));
        }
        if form.bucket.is_empty() || form.key.is_empty() || form.bucket.contains('/') {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "InvalidObject",
                "A share link names a bucket and a key.",
            ));
        }
        let key = form
            .key
            .split('/')
            .map(sign::encode)
            .collect::<Vec<_>>()
            .join("/");
        let path = format!("/{}/{key}", sign::encode(&form.bucket));
        // In canonical order: `response-...` sorts before `versionId`.
        let mut params = Vec::new();
        if form.download {
            let name = form.key.rsplit('/').next().unwrap_or("download");
            let disposition = format!("attachment; filename*=UTF-8''{}", sign::encode(name));
            params.push(format!(
                "response-content-disposition={}",
                sign::encode(&disposition)
            ));
        }
        if let Some(version) = form.version_id.as_deref().filter(|v| !v.is_empty()) {
            params.push(format!("versionId={}", sign::encode(version)));
        }
        let query = params.join("&");
        let url = sign::presigned(
            &session,
            &self.region,
            host_of(parts),
            &path,
            &query,
            Duration::from_secs(form.expires),
        )
        .map_err(signing_failed)?;
        Ok(json_response(
            StatusCode::OK,
            &serde_json::json!({ "url": url }),
        ))
    }

    /// Signs the request's S3 (or admin) twin as the session's key and
    /// hands it to the gateway's handler.
    async fn proxy(
        &self,
        parts: &Parts,
        body: Body,
        target: &str,
        dispatch: &Dispatch<'_>,
    ) -> Result<Response, Refusal> {
        let (id, session) = self.authenticated(parts)?;
        // The path and query are signed (and so sent) in the verifier's own
        // canonical form: the S3 handler acts on exactly the names the
        // browser sent, bytes that are not UTF-8 included (refused there).
        let query = encoding::canonical_query(parts.uri.query().unwrap_or(""), None);
        if crate::auth::signed_in_query(&query) {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "InvalidRequest",
                "The console signs requests itself: the query cannot carry a signature.",
            ));
        }
        let path = encoding::canonical_path(target);
        let request = self.signed(
            parts,
            &session,
            &parts.method,
            &path,
            &query,
            &parts.headers,
        )?;
        // A key deleted (DELETE) or given a new secret (POST) through the
        // admin API: its sessions on this replica end with the answer.
        let deleted_key = matches!(parts.method, Method::DELETE | Method::POST)
            .then(|| path.strip_prefix("/_s3gw/admin/keys/"))
            .flatten()
            .map(|key| {
                percent_encoding::percent_decode_str(key)
                    .decode_utf8_lossy()
                    .into_owned()
            });
        match dispatch(request, body).await {
            Ok(mut response) => {
                if response.status().is_success()
                    && let Some(key) = deleted_key
                {
                    self.sessions.remove_key(&key);
                }
                let headers = response.headers_mut();
                headers.insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(PROXY_CSP),
                );
                // Every console answer is `no-store`; the object's own
                // Cache-Control reaches the page under another name (its
                // metadata editor sends it back unchanged).
                if let Some(value) = headers.remove(header::CACHE_CONTROL) {
                    headers.insert(OBJECT_CACHE_CONTROL, value);
                }
                Ok(response)
            }
            // The key is gone or its secret changed: the session ends.
            Err(error)
                if error.code == "InvalidAccessKeyId" || error.code == "SignatureDoesNotMatch" =>
            {
                self.sessions.remove(&id);
                Err(Refusal::new(
                    StatusCode::UNAUTHORIZED,
                    "SessionEnded",
                    format!("The session's key no longer signs in: {}", error.message),
                ))
            }
            Err(error) => {
                let mut response = error.into_response(&path, "");
                response.headers_mut().insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(PROXY_CSP),
                );
                Ok(response)
            }
        }
    }

    /// An in-process request for `path` + `query` (canonical), signed as
    /// `session`, with the headers of `from` an S3 request may carry.
    fn signed(
        &self,
        parts: &Parts,
        session: &Session,
        method: &Method,
        path: &str,
        query: &str,
        from: &HeaderMap,
    ) -> Result<Parts, Refusal> {
        let host = host_of(parts);
        let path_and_query = if query.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{query}")
        };
        let mut builder = http::Request::builder()
            .method(method.clone())
            .uri(&path_and_query)
            .header(header::HOST, host);
        let mut signed: Vec<(&str, &str)> = Vec::new();
        for (name, value) in from {
            if !forwarded(name) {
                continue;
            }
            if name.as_str().starts_with("x-amz-") {
                let value = value.to_str().map_err(|_| {
                    Refusal::new(
                        StatusCode::BAD_REQUEST,
                        "InvalidHeader",
                        format!("The {name} header is not text."),
                    )
                })?;
                signed.push((name.as_str(), value));
            }
            builder = builder.header(name, value);
        }
        let headers = sign::headers(
            session,
            &self.region,
            method.as_str(),
            host,
            &path_and_query,
            &signed,
        )
        .map_err(signing_failed)?;
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        let (mut request, ()) = builder
            .body(())
            .map_err(|e| Refusal::new(StatusCode::BAD_REQUEST, "InvalidRequest", e.to_string()))?
            .into_parts();
        // Policies that name the client's address see the browser's.
        if let Some(client) = parts.extensions.get::<ClientAddr>() {
            request.extensions.insert(*client);
        }
        Ok(request)
    }
}

/// The session's answer to the page: who it is and its CSRF token.
fn signed_in(session: &Session) -> Response {
    json_response(
        StatusCode::OK,
        &serde_json::json!({
            "access_key": session.access_key,
            "csrf_token": session.csrf_token,
        }),
    )
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    // Only our own text: always a valid header value.
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// The headers of a browser's request that its S3 twin keeps: what S3
/// reads (content, conditions, ranges, `x-amz-*`), never the browser's
/// cookies, origin or credentials, nor what the signature sets.
fn forwarded(name: &HeaderName) -> bool {
    let name = name.as_str();
    match name {
        "content-type"
        | "content-length"
        | "content-md5"
        | "content-disposition"
        | "content-encoding"
        | "content-language"
        | "cache-control"
        | "expires"
        | "range"
        | "if-match"
        | "if-none-match"
        | "if-modified-since"
        | "if-unmodified-since" => true,
        "x-amz-date" | "x-amz-content-sha256" | "x-amz-security-token" => false,
        _ => name.starts_with("x-amz-"),
    }
}

fn host_of(parts: &Parts) -> &str {
    host::request_host(&parts.uri, &parts.headers)
        .ok()
        .flatten()
        .unwrap_or("localhost")
}

/// Refuses a request the browser says comes from another site or origin
/// (`Sec-Fetch-Site`, `Origin`): a page elsewhere can never drive the API.
fn same_origin(parts: &Parts) -> Result<(), Refusal> {
    let headers = &parts.headers;
    let refused = || {
        Refusal::new(
            StatusCode::FORBIDDEN,
            "CrossOriginRefused",
            "The console's API answers only its own pages.",
        )
    };
    if let Some(site) = headers.get("sec-fetch-site")
        && !matches!(site.as_bytes(), b"same-origin" | b"none")
    {
        return Err(refused());
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().map_err(|_| refused())?;
        let origin_host = origin.split_once("://").map_or(origin, |(_, host)| host);
        if !origin_host.eq_ignore_ascii_case(host_of(parts)) {
            return Err(refused());
        }
    }
    Ok(())
}

/// Every session id the request's cookies name (a browser sends one; a
/// client may send several).
fn cookie_values(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, value)| {
            *name == COOKIE && value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit())
        })
        .map(|(_, value)| value.to_owned())
        .collect()
}

async fn read_json<T: serde::de::DeserializeOwned>(
    parts: &Parts,
    body: Body,
) -> Result<T, Refusal> {
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return Err(Refusal::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "InvalidContentType",
            "The console's API takes application/json.",
        ));
    }
    let bytes = axum::body::to_bytes(body, MAX_JSON).await.map_err(|_| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidBody",
            format!("The body could not be read or is over {MAX_JSON} bytes."),
        )
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "InvalidBody",
            format!("The body is not the JSON expected: {e}"),
        )
    })
}

fn no_session() -> Refusal {
    Refusal::new(
        StatusCode::UNAUTHORIZED,
        "NoSession",
        "Sign in to the console first.",
    )
}

fn not_allowed() -> Refusal {
    Refusal::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "The console does not take this method here.",
    )
}

fn signing_failed(why: String) -> Refusal {
    Refusal::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "SigningFailed",
        format!("The console could not sign the request: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder().uri("/_s3gw/console/s3/");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    #[test]
    fn only_well_formed_session_cookies_count() {
        let id = "ab".repeat(32);
        let cookies = format!("other=1; s3gw_console=short; s3gw_console={id}; s3gw_console=");
        let parts = parts(&[("cookie", &cookies)]);
        assert_eq!(cookie_values(&parts.headers), vec![id]);
        assert!(cookie_values(&self::parts(&[]).headers).is_empty());
    }

    #[test]
    fn other_origins_are_refused() {
        let ok = [
            vec![("host", "gw:9878")],
            vec![("host", "gw:9878"), ("origin", "http://gw:9878")],
            vec![("host", "gw:9878"), ("sec-fetch-site", "same-origin")],
        ];
        for headers in ok {
            assert!(same_origin(&parts(&headers)).is_ok(), "{headers:?}");
        }
        let refused = [
            vec![("host", "gw:9878"), ("origin", "http://evil:9878")],
            vec![("host", "gw:9878"), ("origin", "null")],
            vec![("host", "gw:9878"), ("sec-fetch-site", "same-site")],
            vec![("host", "gw:9878"), ("sec-fetch-site", "cross-site")],
        ];
        for headers in refused {
            assert!(same_origin(&parts(&headers)).is_err(), "{headers:?}");
        }
    }

    #[test]
    fn the_s3_twin_keeps_only_what_s3_reads() {
        for kept in ["content-type", "range", "x-amz-meta-a", "x-amz-tagging"] {
            assert!(forwarded(&HeaderName::from_static(kept)), "{kept}");
        }
        for dropped in [
            "cookie",
            "origin",
            "authorization",
            "x-csrf-token",
            "x-amz-date",
            "x-amz-content-sha256",
            "x-amz-security-token",
        ] {
            assert!(!forwarded(&HeaderName::from_static(dropped)), "{dropped}");
        }
    }
}
