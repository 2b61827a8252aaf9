//! Owner-only files: the data directory holds secrets in the clear (every
//! access key's secret and the block-token keys in `om.redb`, a generated
//! root key), so it is created `0700` and every file in it `0600`, whatever
//! the umask. File modes are the only protection these secrets have.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) readable by its owner only, or
/// narrows an existing `dir` to its owner with a warning.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if !dir.is_dir() {
        // The umask only ever narrows `mode`.
        DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)?;
    }
    tighten(dir, DIR_MODE)
}

/// Narrows an existing file to owner read/write, with a warning if it was
/// open to others.
pub fn tighten_file(path: &Path) -> io::Result<()> {
    tighten(path, FILE_MODE)
}

/// Options for creating a file readable and writable by its owner only.
pub fn private_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

fn tighten(path: &Path, allowed: u32) -> io::Result<()> {
    let mode = fs::metadata(path)?.permissions().mode();
    if mode & 0o777 & !allowed != 0 {
        match fs::set_permissions(path, fs::Permissions::from_mode(mode & allowed)) {
            Ok(()) => {}
            // A directory someone else owns (a volume mounted with a group
            // for this process): it stays as the operator made it.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                tracing::warn!(
                    path = %path.display(),
                    mode = format!("{:o}", mode & 0o777),
                    "open to other users and not ours to narrow: the data directory holds secrets in the clear"
                );
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        tracing::warn!(
            path = %path.display(),
            was = format!("{:o}", mode & 0o777),
            now = format!("{:o}", mode & allowed & 0o777),
            "narrowed to its owner: the data directory holds secrets in the clear"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn mode_of(path: &Path) -> u32 {
        fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn new_directories_and_files_are_owner_only() {
        let base = tempfile::tempdir().expect("tempdir");
        let dir = base.path().join("a/data");
        ensure_private_dir(&dir).expect("create");
        assert_eq!(mode_of(&dir), 0o700);
        let path = dir.join("secret");
        let mut file = private_file_options()
            .write(true)
            .create(true)
            .open(&path)
            .expect("open");
        file.write_all(b"x").expect("write");
        assert_eq!(mode_of(&path), 0o600);
    }

    #[test]
    fn looser_directories_and_files_are_narrowed() {
        let base = tempfile::tempdir().expect("tempdir");
        let dir = base.path().join("data");
        fs::create_dir(&dir).expect("mkdir");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        let path = dir.join("om.redb");
        fs::write(&path, b"x").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");

        ensure_private_dir(&dir).expect("tighten");
        assert_eq!(mode_of(&dir), 0o700);
        tighten_file(&path).expect("tighten");
        assert_eq!(mode_of(&path), 0o600);
    }
}
