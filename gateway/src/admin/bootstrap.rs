//! The keys set up at start: the root key from the environment, the keys of
//! the credentials file, and a generated root key on first start.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use storage_client::{Credential, Storage, StorageError, private_files};

use crate::config::Config;
use crate::credentials_file::{self, KeyEntry};

use super::keygen;

/// Where a generated root key is written, next to the data it guards.
pub const ROOT_CREDENTIALS_FILE: &str = "root-credentials.toml";

/// What start-up found or made, for the banner.
#[derive(Debug)]
pub enum RootKeys {
    /// No root key existed: this one was made, stored and written to `file`.
    Generated {
        credential: Credential,
        file: PathBuf,
    },
    /// Root keys already existed (or came from the environment).
    Existing { access_keys: Vec<String> },
}

#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
    #[error("cannot write {path}: {source}")]
    WriteFile {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Upserts the configured keys, then makes sure at least one root key exists.
pub async fn ensure_keys(storage: &Storage, config: &Config) -> Result<RootKeys, BootstrapError> {
    let configured = config.root_key.iter().chain(config.keys.iter());
    // One listing of the keyring, not a lookup per key: a lookup goes through
    // the unknown-key set, where every key absent from its last listing waits
    // for the next (up to `unknown_key_cache_ttl` each), so a file of new
    // keys held the start for that long per key. The same listing, kept up
    // to date with the writes below, names the root keys.
    let mut stored: HashMap<String, Credential> = storage
        .list_credentials()
        .await?
        .into_iter()
        .map(|credential| (credential.access_key.clone(), credential))
        .collect();
    for entry in configured {
        // Refused at start where the back end's own secret store must agree
        // (Ozone with security on), rather than on every request later.
        storage
            .check_secret(&entry.access_key, &entry.secret_key)
            .await?;
        let existing = stored.get(&entry.access_key).cloned();
        // A credentials file never demotes a root key: that would lock the
        // operator out of the admin API with no way back but a new data dir.
        let is_root = entry.root || existing.as_ref().is_some_and(|c| c.is_root);
        let credential = Credential {
            name: entry.name.clone(),
            access_key: entry.access_key.clone(),
            secret_key: entry.secret_key.clone(),
            is_root,
        };
        if existing.as_ref() != Some(&credential) {
            storage.put_credential(credential.clone()).await?;
            stored.insert(credential.access_key.clone(), credential);
        }
    }

    let mut roots: Vec<String> = stored
        .into_values()
        .filter(|c| c.is_root)
        .map(|c| c.access_key)
        .collect();
    if !roots.is_empty() {
        roots.sort();
        return Ok(RootKeys::Existing { access_keys: roots });
    }

    let credential = keygen::issue(storage, "root", true).await?;
    let file = config.settings.data_dir.join(ROOT_CREDENTIALS_FILE);
    // Written before it is stored: a key that exists only in storage, with its
    // secret lost, would be worse than a file for a key not yet stored.
    write_private_file(&file, &credentials_file::render(&entry_of(&credential))).map_err(
        |source| BootstrapError::WriteFile {
            path: file.clone(),
            source,
        },
    )?;
    storage.put_credential(credential.clone()).await?;
    Ok(RootKeys::Generated { credential, file })
}

/// How clients reach this instance, for commands that work as printed.
#[derive(Clone, Debug)]
pub struct Instance {
    /// `http(s)://HOST:PORT` as a client on this machine reaches it.
    pub endpoint: String,
    pub region: String,
    /// Where `admin` finds a generated root key, when not at the default.
    pub data_dir: Option<PathBuf>,
    /// Where `admin` finds a root key's secret when it is not in the data dir.
    pub root_source: RootSource,
}

/// Where the secret of a root key this instance configures is kept, so that
/// the admin command the banner prints can sign with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootSource {
    /// A `root = true` key of this credentials file.
    CredentialsFile(PathBuf),
    /// `S3GW_ROOT_ACCESS_KEY` and `S3GW_ROOT_SECRET_KEY`.
    Environment,
    /// `root-credentials.toml` in the data dir, written on first start.
    DataDir,
    /// None of these: the root keys were configured by an earlier start.
    Unknown,
}

impl Instance {
    /// `s3-gateway admin` with the flags that reach this instance and find
    /// a root key's secret.
    fn admin_command(&self) -> String {
        let mut command = format!(
            "s3-gateway admin --endpoint {} --region {}",
            self.endpoint, self.region
        );
        match &self.root_source {
            RootSource::CredentialsFile(file) => {
                command.push_str(&format!(
                    " --credentials {}",
                    shell_word(&file.display().to_string())
                ));
            }
            RootSource::Environment => {}
            RootSource::Unknown => command.push_str(" --access-key ID --secret-key SECRET"),
            RootSource::DataDir => {
                if let Some(dir) = &self.data_dir {
                    command.push_str(&format!(
                        " --data-dir {}",
                        shell_word(&dir.display().to_string())
                    ));
                }
            }
        }
        command
    }

    /// What the admin command needs besides its flags, if anything.
    fn admin_needs(&self) -> &'static str {
        match self.root_source {
            RootSource::Environment => {
                "with S3GW_ROOT_ACCESS_KEY and S3GW_ROOT_SECRET_KEY set as for this server; "
            }
            RootSource::Unknown => "ID and SECRET of a root key; ",
            RootSource::CredentialsFile(_) | RootSource::DataDir => "",
        }
    }
}

/// `text` as one shell word: quoted unless it is plainly safe.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-:=@".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

impl RootKeys {
    /// What the operator sees on stdout at start: on first start the new
    /// key and an AWS CLI line that works as printed (endpoint and region
    /// of this instance, whatever `~/.aws/config` says); later, the root
    /// key ids and an admin command for this instance.
    pub fn banner(&self, instance: &Instance) -> String {
        match self {
            RootKeys::Generated { credential, file } => format!(
                "Created the root key (also saved to {file}):\n  \
                 access key: {ak}\n  secret key: {sk}\n\
                 Try it:\n  \
                 AWS_ACCESS_KEY_ID={ak} AWS_SECRET_ACCESS_KEY={sk} aws --endpoint-url {endpoint} --region {region} s3 ls\n",
                file = file.display(),
                ak = credential.access_key,
                sk = credential.secret_key,
                endpoint = instance.endpoint,
                region = instance.region,
            ),
            RootKeys::Existing { access_keys } => format!(
                "Root access key id: {}\n\
                 Manage keys with: {} keys list ({}also keys create --name NAME, keys delete ACCESS_KEY)\n",
                shortened(access_keys),
                instance.admin_command(),
                instance.admin_needs(),
            ),
        }
    }
}

/// Root keys the banner names; a cluster shared by many gateways can hold
/// more, and `admin keys list` shows them all.
const BANNER_ROOT_KEYS: usize = 3;

fn shortened(access_keys: &[String]) -> String {
    let shown = access_keys[..access_keys.len().min(BANNER_ROOT_KEYS)].join(", ");
    match access_keys.len().saturating_sub(BANNER_ROOT_KEYS) {
        0 => shown,
        more => format!("{shown} and {more} more (s3-gateway admin keys list)"),
    }
}

fn entry_of(credential: &Credential) -> KeyEntry {
    KeyEntry {
        name: credential.name.clone(),
        access_key: credential.access_key.clone(),
        secret_key: credential.secret_key.clone(),
        root: credential.is_root,
    }
}

/// Writes `text` to `path` readable by the owner only, replacing any old file
/// atomically (a temporary file, synced, then renamed).
fn write_private_file(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        private_files::ensure_private_dir(dir)?;
    }
    let temporary = path.with_extension("toml.tmp");
    let mut file = private_files::private_file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_files_are_owner_only_and_replaced_whole() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("sub").join(ROOT_CREDENTIALS_FILE);
        write_private_file(&path, "old old old").expect("write");
        write_private_file(&path, "new").expect("rewrite");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn many_root_keys_are_counted_not_listed() {
        let keys = |n: usize| -> Vec<String> { (1..=n).map(|i| format!("K{i}")).collect() };
        assert_eq!(shortened(&keys(1)), "K1");
        assert_eq!(shortened(&keys(3)), "K1, K2, K3");
        assert_eq!(
            shortened(&keys(5)),
            "K1, K2, K3 and 2 more (s3-gateway admin keys list)"
        );
    }

    #[test]
    fn the_first_start_banner_has_a_ready_to_paste_line() {
        let credential = keygen::generate("root", true);
        let instance = Instance {
            endpoint: "http://127.0.0.1:9000".into(),
            region: "eu-west-3".into(),
            data_dir: Some(PathBuf::from("/srv/s3 data")),
            root_source: RootSource::DataDir,
        };
        let banner = RootKeys::Generated {
            credential: credential.clone(),
            file: PathBuf::from("data/root-credentials.toml"),
        }
        .banner(&instance);
        let expected = format!(
            "AWS_ACCESS_KEY_ID={} AWS_SECRET_ACCESS_KEY={} aws --endpoint-url http://127.0.0.1:9000 --region eu-west-3 s3 ls",
            credential.access_key, credential.secret_key
        );
        assert!(banner.contains(&expected), "{banner}");
        let later = RootKeys::Existing {
            access_keys: vec![credential.access_key.clone()],
        }
        .banner(&instance);
        assert!(later.contains(&credential.access_key));
        assert!(!later.contains(&credential.secret_key));
        assert!(
            later.contains(
                "s3-gateway admin --endpoint http://127.0.0.1:9000 --region eu-west-3 --data-dir '/srv/s3 data' keys list"
            ),
            "{later}"
        );
    }

    #[test]
    fn the_admin_command_finds_the_root_key_where_this_instance_keeps_it() {
        let later = |root_source| {
            RootKeys::Existing {
                access_keys: vec!["ROOTKEY".into()],
            }
            .banner(&Instance {
                endpoint: "http://127.0.0.1:9000".into(),
                region: "us-east-1".into(),
                data_dir: Some(PathBuf::from("/srv/data")),
                root_source,
            })
        };
        let from_file = later(RootSource::CredentialsFile(PathBuf::from(
            "/etc/s3 gw/keys.toml",
        )));
        assert!(
            from_file.contains(
                "s3-gateway admin --endpoint http://127.0.0.1:9000 --region us-east-1 --credentials '/etc/s3 gw/keys.toml' keys list (also"
            ),
            "{from_file}"
        );
        let from_env = later(RootSource::Environment);
        assert!(
            from_env.contains(
                "s3-gateway admin --endpoint http://127.0.0.1:9000 --region us-east-1 keys list (with S3GW_ROOT_ACCESS_KEY and S3GW_ROOT_SECRET_KEY set as for this server; also"
            ),
            "{from_env}"
        );
        let unknown = later(RootSource::Unknown);
        assert!(
            unknown.contains("--access-key ID --secret-key SECRET keys list (ID and SECRET"),
            "{unknown}"
        );
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("./data"), "./data");
        assert_eq!(shell_word("it's here"), "'it'\\''s here'");
    }
}
