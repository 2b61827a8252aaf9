//! The admin HTTP API, for root keys only, signed in the `Authorization`
//! header (SigV4 or SigV2; never a presigned URL):
//!
//! - `POST /_s3gw/admin/keys?name=NAME` -> 200 `{"name", "access_key", "secret_key"}`
//! - `GET /_s3gw/admin/keys` -> 200 `[{"name", "access_key", "is_root"}]` (no secrets)
//! - `DELETE /_s3gw/admin/keys/ACCESS_KEY` -> 204, or 404 if there is no such key
//! - `POST /_s3gw/admin/keys/ACCESS_KEY` -> 200 `{"name", "access_key", "secret_key"}`:
//!   a new secret for the key (the old one stops at once), or 404
//! - the bucket commands of [`super::buckets`] under `/_s3gw/admin/buckets`
//!
//! `_s3gw` cannot be a bucket name (S3 forbids `_`), so in path style the
//! namespace never collides with S3; in virtual-host style the path is an
//! object key and belongs to S3 (see [`is_admin_request`]).

use axum::body::Body;
use axum::response::Response;
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode, header};
use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::auth::Authenticated;
use crate::error::{Code, S3Error};
use crate::host;
use crate::state::AppState;

use super::{buckets, keygen, no_such_key};
use crate::credentials_file;

/// Every path under this prefix belongs to the admin API.
pub const PREFIX: &str = "/_s3gw/";
const KEYS_PATH: &str = "/_s3gw/admin/keys";
const BUCKETS_PATH: &str = "/_s3gw/admin/buckets";

/// Serialises key changes so two concurrent deletes cannot each see
/// another root key and together remove the last one, and two creates
/// cannot each find a name free (on this replica).
static KEY_CHANGES: Mutex<()> = Mutex::const_new(());

/// A key as `create` returns it: the only time the secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedKey {
    pub name: String,
    pub access_key: String,
    pub secret_key: String,
}

/// A key as `list` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySummary {
    pub name: String,
    pub access_key: String,
    pub is_root: bool,
}

/// Whether a request is for the admin API rather than S3: a path under
/// [`PREFIX`] sent to the service host, not to a virtual-hosted bucket.
pub fn is_admin_request(parts: &Parts, domain: Option<&str>) -> bool {
    if !parts.uri.path().starts_with(PREFIX) {
        return false;
    }
    // A request naming two hosts is left to the router, which refuses it.
    let Ok(host) = host::request_host(&parts.uri, &parts.headers) else {
        return false;
    };
    match (host, domain) {
        (Some(host), Some(domain)) => host::virtual_host_bucket(host, domain).is_none(),
        _ => true,
    }
}

/// Authenticates an admin request and answers it. Only a request signed
/// in its `Authorization` header is taken: one signed in its query string
/// (a presigned URL, SigV4 or SigV2) is refused before its signature is
/// checked, so a URL that leaks (into a log, a browser history, a chat)
/// can neither list keys nor make or delete one.
pub async fn serve(state: &AppState, parts: &Parts, body: Body) -> Result<Response, S3Error> {
    refuse_query_auth(parts)?;
    let caller = state.verifier.authenticate(parts, body).await?;
    handle(state, parts, caller).await
}

fn refuse_query_auth(parts: &Parts) -> Result<(), S3Error> {
    if crate::auth::signed_in_query(parts.uri.query().unwrap_or("")) {
        return Err(S3Error::new(
            Code::AccessDenied,
            "The admin API takes only requests signed in the Authorization header, \
             never a presigned URL (query-string authentication).",
        ));
    }
    Ok(())
}

/// Answers one admin request from an authenticated caller.
async fn handle(
    state: &AppState,
    parts: &Parts,
    caller: Authenticated,
) -> Result<Response, S3Error> {
    if crate::access_control::is_anonymous(&caller.identity) {
        return Err(crate::auth::anonymous_refused());
    }
    if !caller.is_root {
        return Err(S3Error::new(
            Code::AccessDenied,
            "Only root keys may use the admin API.",
        ));
    }
    let path = parts.uri.path();
    if path == KEYS_PATH {
        return match parts.method {
            Method::POST => create_key(state, parts).await,
            Method::GET => list_keys(state).await,
            _ => Err(S3Error::method_not_allowed()),
        };
    }
    if let Some(encoded) = path
        .strip_prefix(KEYS_PATH)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
    {
        return match parts.method {
            Method::DELETE => delete_key(state, &decoded(encoded)?).await,
            Method::POST => rotate_secret(state, &decoded(encoded)?).await,
            _ => Err(S3Error::method_not_allowed()),
        };
    }
    if path == BUCKETS_PATH {
        return match parts.method {
            Method::GET => json_response(StatusCode::OK, &buckets::list(&state.storage).await?),
            _ => Err(S3Error::method_not_allowed()),
        };
    }
    if let Some(rest) = path
        .strip_prefix(BUCKETS_PATH)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        let query = parts.uri.query().unwrap_or("");
        return match (rest.split_once('/'), &parts.method) {
            (Some((bucket, "owner")), &Method::PUT) if !bucket.is_empty() => {
                let access_key = query_param(query, "access_key")?.ok_or_else(|| {
                    S3Error::invalid_argument("The access_key parameter is required.")
                })?;
                let bucket = decoded(bucket)?;
                let summary = buckets::set_owner(&state.storage, &bucket, &access_key).await?;
                json_response(StatusCode::OK, &summary)
            }
            (None, &Method::DELETE) if !rest.is_empty() => {
                let force = match query_param(query, "force")?.as_deref() {
                    None | Some("false") => false,
                    Some("true") => true,
                    Some(_) => {
                        return Err(S3Error::invalid_argument(
                            "The force parameter is true or false.",
                        ));
                    }
                };
                buckets::delete(&state.storage, &decoded(rest)?, force).await?;
                Ok(empty_response(StatusCode::NO_CONTENT))
            }
            (Some((_, "owner")) | None, _) if !rest.is_empty() => {
                Err(S3Error::method_not_allowed())
            }
            _ => Err(no_such_resource()),
        };
    }
    Err(no_such_resource())
}

fn no_such_resource() -> S3Error {
    S3Error::new(
        Code::NoSuchAdminResource,
        "The admin API has no such resource.",
    )
}

/// A path segment, percent-decoded.
fn decoded(segment: &str) -> Result<String, S3Error> {
    percent_decode_str(segment)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| S3Error::invalid_uri())
}

fn empty_response(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

async fn create_key(state: &AppState, parts: &Parts) -> Result<Response, S3Error> {
    let name = query_param(parts.uri.query().unwrap_or(""), "name")?
        .ok_or_else(|| S3Error::invalid_argument("The name parameter is required."))?;
    if let Err(why) = credentials_file::validate_name(&name) {
        return Err(S3Error::invalid_argument(format!("The key {why}.")));
    }
    // Names identify keys to people (`keys list`); two alices would not.
    let _serialised = KEY_CHANGES.lock().await;
    let taken = state
        .storage
        .list_credentials()
        .await?
        .iter()
        .any(|c| c.name == name);
    if taken {
        return Err(S3Error::new(
            Code::KeyNameInUse,
            format!("A key named {name:?} already exists."),
        ));
    }
    let credential = keygen::issue(&state.storage, &name, false).await?;
    state.storage.put_credential(credential.clone()).await?;
    tracing::info!(name = %credential.name, access_key = %credential.access_key, "key created");
    json_response(
        StatusCode::OK,
        &CreatedKey {
            name: credential.name,
            access_key: credential.access_key,
            secret_key: credential.secret_key,
        },
    )
}

async fn list_keys(state: &AppState) -> Result<Response, S3Error> {
    let mut keys: Vec<KeySummary> = state
        .storage
        .list_credentials()
        .await?
        .into_iter()
        .map(|c| KeySummary {
            name: c.name,
            access_key: c.access_key,
            is_root: c.is_root,
        })
        .collect();
    keys.sort_by(|a, b| (&a.name, &a.access_key).cmp(&(&b.name, &b.access_key)));
    json_response(StatusCode::OK, &keys)
}

async fn delete_key(state: &AppState, access_key: &str) -> Result<Response, S3Error> {
    let _serialised = KEY_CHANGES.lock().await;
    let credentials = state.storage.list_credentials().await?;
    let Some(target) = credentials.iter().find(|c| c.access_key == access_key) else {
        return Err(no_such_key(access_key));
    };
    if target.is_root && credentials.iter().filter(|c| c.is_root).count() == 1 {
        return Err(S3Error::new(
            Code::DeleteConflict,
            "Refusing to delete the last root key.",
        ));
    }
    if !state.storage.delete_credential(access_key).await? {
        return Err(no_such_key(access_key));
    }
    // Drop cached secrets and signing keys so the key is refused at once.
    state.verifier.forget(access_key);
    tracing::info!(%access_key, "key deleted");
    Ok(empty_response(StatusCode::NO_CONTENT))
}

/// Gives the key a new secret; the old one is refused from now on.
async fn rotate_secret(state: &AppState, access_key: &str) -> Result<Response, S3Error> {
    let _serialised = KEY_CHANGES.lock().await;
    let credentials = state.storage.list_credentials().await?;
    let Some(target) = credentials.into_iter().find(|c| c.access_key == access_key) else {
        return Err(no_such_key(access_key));
    };
    let secret_key = keygen::generate(&target.name, target.is_root).secret_key;
    // Where the back end keeps S3 secrets of its own (Ozone with security
    // on) the two must agree: refused there rather than split.
    state.storage.check_secret(access_key, &secret_key).await?;
    let credential = storage_client::Credential {
        secret_key,
        ..target
    };
    state.storage.put_credential(credential.clone()).await?;
    state.verifier.forget(access_key);
    tracing::info!(%access_key, "key secret rotated");
    json_response(
        StatusCode::OK,
        &CreatedKey {
            name: credential.name,
            access_key: credential.access_key,
            secret_key: credential.secret_key,
        },
    )
}

fn json_response(status: StatusCode, value: &impl Serialize) -> Result<Response, S3Error> {
    let body = serde_json::to_vec(value)
        .map_err(|e| S3Error::internal(format!("cannot encode the response: {e}")))?;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// The decoded value of `name` in a query string (`+` is a space, as in forms).
fn query_param(query: &str, name: &str) -> Result<Option<String>, S3Error> {
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == name {
            let value = value.replace('+', " ");
            return percent_decode_str(&value)
                .decode_utf8()
                .map(|v| Some(v.into_owned()))
                .map_err(|_| S3Error::invalid_argument("The query is not valid UTF-8."));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: Method, uri: &str, host: &str) -> Parts {
        let (parts, ()) = http::Request::builder()
            .method(method)
            .uri(uri)
            .header(header::HOST, host)
            .body(())
            .expect("valid request")
            .into_parts();
        parts
    }

    #[test]
    fn admin_paths_are_recognised_on_the_service_host_only() {
        let keys = "/_s3gw/admin/keys";
        assert!(is_admin_request(
            &parts(Method::GET, keys, "127.0.0.1:9878"),
            None
        ));
        assert!(is_admin_request(
            &parts(Method::GET, keys, "s3.example.com"),
            Some("s3.example.com")
        ));
        assert!(!is_admin_request(
            &parts(Method::GET, keys, "photos.s3.example.com:9878"),
            Some("s3.example.com")
        ));
        assert!(!is_admin_request(
            &parts(Method::GET, "/bucket/_s3gw/admin/keys", "h"),
            None
        ));
        assert!(!is_admin_request(&parts(Method::GET, "/_s3gwx", "h"), None));
        assert!(!is_admin_request(
            &parts(
                Method::GET,
                "http://photos.s3.example.com/_s3gw/admin/keys",
                "s3.example.com"
            ),
            Some("s3.example.com")
        ));
    }

    #[test]
    fn presigned_admin_requests_are_refused() {
        for query in [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=00",
            "name=x&AWSAccessKeyId=K&Signature=abc&Expires=9999999999",
        ] {
            let request = parts(Method::GET, &format!("/_s3gw/admin/keys?{query}"), "h");
            let err = refuse_query_auth(&request).unwrap_err();
            assert_eq!((err.code, err.status.as_u16()), ("AccessDenied", 403));
            assert!(err.message.contains("presigned URL"), "{}", err.message);
        }
        refuse_query_auth(&parts(Method::POST, "/_s3gw/admin/keys?name=alice", "h")).unwrap();
        refuse_query_auth(&parts(Method::GET, "/_s3gw/admin/keys", "h")).unwrap();
    }

    #[test]
    fn query_parameters_are_decoded() {
        assert_eq!(
            query_param("a=1&name=alice%20smith", "name").expect("valid"),
            Some("alice smith".to_string())
        );
        assert_eq!(
            query_param("name=a+b%2Bc", "name").expect("valid"),
            Some("a b+c".to_string())
        );
        assert_eq!(query_param("other=x", "name").expect("valid"), None);
        assert_eq!(
            query_param("name", "name").expect("valid"),
            Some(String::new())
        );
        assert!(query_param("name=%FF", "name").is_err());
    }
}
