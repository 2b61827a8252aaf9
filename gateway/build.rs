//! Names the build for `--version`, `s3-gateway version` and the
//! `s3gw_build_info` metric: the commit it was built from and that
//! commit's date (the source's date, not the clock's, so two builds of one
//! commit are the same), or `unknown` outside a git checkout (a source
//! archive).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let date = git(&["log", "-1", "--format=%cs", "HEAD"]);
    println!(
        "cargo:rustc-env=S3GW_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=S3GW_COMMIT_DATE={}",
        date.as_deref().unwrap_or("unknown")
    );
    // A new commit (HEAD or the branch it names moves) renames the build.
    // Only paths that exist: cargo reruns for a missing one every time.
    let mut watched = vec!["build.rs".to_owned()];
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        watched.push(format!("{dir}/HEAD"));
    }
    if let Some(dir) = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        watched.push(format!("{dir}/refs/heads"));
        watched.push(format!("{dir}/packed-refs"));
    }
    for path in watched {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
