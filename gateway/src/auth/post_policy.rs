//! Browser form uploads (PostObject) carry their signature in the form:
//! the uploader's key signs the base64 policy document itself (SigV4:
//! `x-amz-algorithm`, `x-amz-credential`, `x-amz-date`, `x-amz-signature`;
//! SigV2: `AWSAccessKeyId`, `signature`). Nothing else of the request is
//! signed, so the operation must act only on what the policy allows.

use crate::access_control::Identity;
use axum::body::Body;
use http::header::CONTENT_LENGTH;
use http::request::Parts;

use super::errors::{access_denied, invalid_argument, signature_mismatch, unknown_access_key};
use super::sigv4::{self, sign, signatures_match};
use super::{Payload, Verifier, length_header, sigv2};
use crate::error::S3Error;

impl Verifier {
    /// The identity whose key signed the form's `policy` field, or the S3
    /// error AWS answers. `fields` are the form's fields before the file,
    /// names lower-cased.
    pub async fn verify_post_policy(
        &self,
        fields: &[(String, String)],
    ) -> Result<Identity, S3Error> {
        let field = |name: &str| {
            fields
                .iter()
                .find(|(field, _)| field == name)
                .map(|(_, value)| value.as_str())
        };
        let required = |name: &'static str| {
            field(name).ok_or_else(|| {
                invalid_argument(
                    format!("Bucket POST must contain a field named '{name}'.  If it is specified, please check the order of the fields."),
                    name,
                    "",
                )
            })
        };
        let policy = required("policy")?;
        if let Some(access_key) = field("awsaccesskeyid") {
            self.check_sigv2_enabled()?;
            let signature = required("signature")?;
            let stored = self
                .source
                .credential(access_key)
                .await?
                .ok_or_else(|| unknown_access_key(access_key))?;
            if !signatures_match(&sigv2::sign(&stored.secret_key, policy), signature) {
                return Err(signature_mismatch(None));
            }
            return Ok(Identity::new(stored.access_key));
        }
        let algorithm = required("x-amz-algorithm")?;
        if algorithm != "AWS4-HMAC-SHA256" {
            return Err(invalid_argument(
                "Only AWS4-HMAC-SHA256 is supported",
                "x-amz-algorithm",
                algorithm,
            ));
        }
        let credential_text = required("x-amz-credential")?;
        let stamp = required("x-amz-date")?;
        let signature = required("x-amz-signature")?;
        let credential = sigv4::Credential::parse(credential_text).ok_or_else(|| {
            invalid_argument(
                "Error parsing the X-Amz-Credential parameter",
                "x-amz-credential",
                credential_text,
            )
        })?;
        if let Some(problem) = credential.problem(&self.region, stamp) {
            return Err(invalid_argument(
                format!(
                    "Error parsing the X-Amz-Credential parameter; {}",
                    problem.reason()
                ),
                "x-amz-credential",
                credential_text,
            ));
        }
        let stored = self
            .source
            .credential(credential.access_key)
            .await?
            .ok_or_else(|| unknown_access_key(credential.access_key))?;
        let key = self
            .keys
            .get(
                &stored.access_key,
                &stored.secret_key,
                credential.date,
                &self.region,
                sigv4::SERVICE,
            )
            .ok_or_else(|| access_denied("The x-amz-credential field is not valid"))?;
        if !signatures_match(&sign(&key, policy), signature) {
            return Err(signature_mismatch(None));
        }
        Ok(Identity::new(stored.access_key))
    }

    /// A form upload's body, read under the server's body limits. Nothing
    /// vouches for its bytes: the policy's conditions do.
    pub fn form_payload(&self, parts: &Parts, body: Body) -> Result<Payload, S3Error> {
        let content_length = length_header(parts, CONTENT_LENGTH.as_str())?;
        Ok(Payload::plain(
            body,
            content_length,
            None,
            &self.body_limits,
        ))
    }
}
