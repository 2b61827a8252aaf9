//! The rule for files that hold secrets the gateway reads at start (the
//! `credentials` file, `ozone_system_secret_file`, `ozone_records_key_file`):
//! no one but their owner may read them, or the start stops with a
//! one-line reason.
//!
//! One exception, close to PostgreSQL's for its TLS key: a file owned by
//! root may also be readable (not writable) by its group when the gateway
//! is a member of that group. That is how a Kubernetes Secret reaches a pod
//! that does not run as root (owner root, group the pod's `fsGroup`, mode
//! 0440), and how an administrator hands a root-owned file to a service's
//! group. Others may never read or write such a file.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Permission bits of users outside the file's owner and group.
const OTHERS: u32 = 0o007;
/// Permission bits of the file's group.
const GROUP: u32 = 0o070;
/// What the group of a root-owned file may do.
const ROOT_FILE_GROUP: u32 = 0o040;

/// `Ok` if the file at `path`, which holds `what` (e.g. "secret keys"),
/// is readable by its owner only (or, root-owned, by its group); else a
/// one-line reason naming the file and the `chmod` that fixes it, quoting
/// nothing of its content.
pub fn check(path: &Path, what: &str) -> Result<(), String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mode = meta.mode() & 0o777;
    let group_may = if meta.uid() == 0 && own_groups().contains(&meta.gid()) {
        ROOT_FILE_GROUP
    } else {
        0
    };
    if mode & OTHERS != 0 || mode & GROUP & !group_may != 0 {
        return Err(format!(
            "{shown} is open to other users (mode {mode:o}): it holds {what}, \
             make it readable by the gateway only (chmod 600 {shown})"
        ));
    }
    Ok(())
}

/// The groups this process acts with: its effective group and its
/// supplementary groups (Linux: `/proc/self/status`; none elsewhere, so
/// only the owner-only rule applies there).
fn own_groups() -> Vec<u32> {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return Vec::new();
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|id| id.parse().ok())
            .collect::<Vec<u32>>()
    };
    let mut groups = field("Groups:");
    groups.extend(field("Gid:").get(1));
    groups
}

/// The text of the file at `path`, which holds `what`, once [`check`]
/// passes; else a one-line reason naming the file.
pub fn read(path: &Path, what: &str) -> Result<String, String> {
    check(path, what)?;
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// A temporary file holding `text` with permission bits `mode`, for the
/// tests of the secret files' readers.
#[cfg(test)]
pub(super) fn file_with(text: &str, mode: u32) -> tempfile::NamedTempFile {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(text.as_bytes()).expect("write");
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode)).expect("chmod");
    file
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn only_the_owner_may_read_unless_root_owns_it() {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        let root_owned = std::fs::metadata(file.path()).expect("stat").uid() == 0;
        for (mode, allowed) in [
            (0o600, true),
            (0o400, true),
            (0o700, true),
            (0o640, root_owned),
            (0o440, root_owned),
            (0o660, false),
            (0o604, false),
            (0o644, false),
            (0o444, false),
            (0o606, false),
        ] {
            std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode))
                .expect("chmod");
            let outcome = check(file.path(), "secret keys");
            assert_eq!(outcome.is_ok(), allowed, "mode {mode:o}: {outcome:?}");
            if let Err(message) = outcome {
                assert!(message.contains(&format!("mode {mode:o}")), "{message}");
                assert!(message.contains("secret keys"), "{message}");
                assert!(message.contains("chmod 600"), "{message}");
                assert_eq!(message.lines().count(), 1, "{message}");
            }
        }
        let missing = check(Path::new("/nonexistent/keys.toml"), "keys").unwrap_err();
        assert!(missing.contains("/nonexistent/keys.toml"), "{missing}");
    }
}
