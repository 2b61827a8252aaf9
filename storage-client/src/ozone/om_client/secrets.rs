//! The OM's S3 secret store: a new key's secret issued, a deleted key's
//! revoked.

use ozone::Type;
use ozone::om_request::Command;

use super::{OmClient, missing};
use crate::Result;
use crate::ozone::proto::hadoop::ozone;

impl OmClient {
    /// Makes the OM create an S3 secret for `access_id` and returns it, so
    /// that Ozone itself knows the key (its S3 gateway verifies signatures
    /// against these secrets when security is on). Ozone hands a secret
    /// out only in the answer that creates it: an access id that has one
    /// already is refused.
    pub async fn issue_s3_secret(&self, access_id: &str) -> Result<String> {
        let command = Command::GetS3Secret(ozone::GetS3SecretRequest {
            kerberos_id: access_id.into(),
            create_if_not_exist: Some(true),
        });
        let response = self.submit(access_id, Type::GetS3Secret, command).await?;
        let secret = answer!(response, GetS3Secret)
            .and_then(|r| r.s3_secret)
            .map(|s| s.aws_secret)
            .ok_or_else(|| missing("GetS3Secret", "s3Secret"))?;
        self.remember_secret(access_id, &secret).await;
        Ok(secret)
    }

    /// Drops `access_id`'s S3 secret, if it has one; with security on,
    /// signed with the secret dropped, which is forgotten here too.
    pub async fn revoke_s3_secret(&self, access_id: &str) -> Result<()> {
        let command = Command::RevokeS3Secret(ozone::RevokeS3SecretRequest {
            kerberos_id: access_id.into(),
        });
        let result = self.submit(access_id, Type::RevokeS3Secret, command).await;
        if let Some(keyring) = &self.keyring {
            keyring.forget(access_id).await;
        }
        result.map(drop)
    }
}
