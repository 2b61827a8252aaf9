//! The file of `ozone_system_secret_file`: the S3 secret of the gateway's
//! system identity in a security-on Ozone cluster's own store. It lets
//! whoever holds it act as the gateway towards the OM, so it is refused
//! when others may read it ([`super::private_file`]); no error ever quotes
//! its content.

use std::path::Path;

use storage_client::SystemSecret;

/// Reads the secret: the file's only line, or the `awsSecret=` line of
/// what `ozone s3 getsecret -u .s3gw` prints. `Err` is a one-line reason
/// naming the file.
pub fn read(path: &Path) -> Result<SystemSecret, String> {
    let shown = path.display();
    let text = super::private_file::read(path, "the gateway's Ozone secret")?;
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let secret = match lines.as_slice() {
        [only] if !only.contains('=') => Some(*only),
        _ => lines
            .iter()
            .find_map(|line| line.strip_prefix("awsSecret=")),
    };
    match secret.map(str::trim) {
        Some(secret) if !secret.is_empty() && !secret.contains(char::is_whitespace) => {
            Ok(SystemSecret::new(secret.to_owned()))
        }
        _ => Err(format!(
            "{shown} holds no S3 secret: write the secret alone, or what \
             `ozone s3 getsecret -u .s3gw` printed"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::private_file::file_with;
    use super::*;

    #[test]
    fn reads_a_bare_secret_or_ozones_getsecret_output() {
        let bare = file_with("  0123abcd\n", 0o600);
        assert_eq!(read(bare.path()), Ok(SystemSecret::new("0123abcd".into())));
        let printed = file_with("awsAccessKey=.s3gw\nawsSecret=feedbeef\n", 0o400);
        assert_eq!(
            read(printed.path()),
            Ok(SystemSecret::new("feedbeef".into()))
        );
    }

    #[test]
    fn refuses_a_file_others_may_read_without_quoting_it() {
        for mode in [0o604, 0o660, 0o644] {
            let file = file_with("hunter2-secret\n", mode);
            let message = read(file.path()).expect_err("open to others");
            assert!(message.contains(&format!("{mode:o}")), "{message}");
            assert!(message.contains("chmod 600"), "{message}");
            assert!(!message.contains("hunter2"), "{message}");
        }
    }

    #[test]
    fn refuses_a_file_without_a_secret() {
        for text in [
            "",
            "\n\n",
            "awsAccessKey=.s3gw\n",
            "two words\n",
            "awsSecret=\n",
        ] {
            let file = file_with(text, 0o600);
            let message = read(file.path()).expect_err(text);
            assert!(
                message.contains("holds no S3 secret"),
                "{text:?}: {message}"
            );
        }
        let missing = read(Path::new("/nonexistent/s3gw-secret")).expect_err("missing");
        assert!(missing.contains("/nonexistent/s3gw-secret"), "{missing}");
    }
}
