//! The binary's command line: invalid configuration exits 2 with one line,
//! and `admin keys` against a real server started on a free port.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

fn gateway() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_s3-gateway"));
    for (name, _) in std::env::vars() {
        if name.starts_with("S3GW_") {
            command.env_remove(name);
        }
    }
    command
}

#[test]
fn invalid_configuration_exits_2_with_one_line() {
    let cases: [&[&str]; 6] = [
        &["--listen", "not-an-address"],
        &["--config", "/nonexistent/gateway.toml"],
        &["--credentials", "/nonexistent/keys.toml"],
        &["--backend", "ozone"],
        &["--backend", "hdfs"],
        &["--om", "127.0.0.1:8981"],
    ];
    for args in cases {
        let output = gateway().args(args).output().expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("invalid configuration"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_log_level_that_is_no_level_exits_2_naming_the_levels() {
    // tracing would read these as target names and silence every other
    // event, errors included.
    for level in ["warning", "verbose", "inf", "s3_gateway=warning"] {
        for (flag, env) in [(true, false), (false, true)] {
            let mut command = gateway();
            command.args(["--listen", "127.0.0.1:0"]);
            if flag {
                command.args(["--log-level", level]);
            }
            if env {
                command.env("S3GW_LOG_LEVEL", level);
            }
            let output = command.output().expect("runs");
            assert_eq!(output.status.code(), Some(2), "{level}: {output:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(stderr.trim_end().lines().count(), 1, "{level}: {stderr}");
            let source = if flag {
                "--log-level"
            } else {
                "S3GW_LOG_LEVEL"
            };
            assert!(stderr.contains(source), "{level}: {stderr}");
            assert!(
                stderr.contains("off, error, warn, info, debug or trace"),
                "{level}: {stderr}"
            );
        }
    }
}

#[test]
fn levels_and_filter_directives_start() {
    for level in ["warn", "s3_gateway=debug,info", "info,h2=trace"] {
        let (_, log) = start_and_stop(&["--listen", "127.0.0.1:0", "--log-level", level]);
        assert!(!log.contains("invalid configuration"), "{level}: {log}");
    }
    // A bare level is the gateway's: its serving line is logged at info.
    let (_, log) = start_and_stop(&["--listen", "127.0.0.1:0", "--log-level", "info"]);
    assert!(log.contains("serving"), "{log}");
}

#[test]
fn an_unreachable_ozone_manager_exits_1_naming_it() {
    // A port that was just free: nothing answers there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let om = format!("127.0.0.1:{port}");
    let dir = tempfile::tempdir().expect("temp dir");
    let output = gateway()
        .args(["--backend", "ozone", "--om", &om, "--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--ozone-records-key-file")
        .arg(records_key_file(dir.path()))
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&om), "{stderr}");
    assert!(stderr.contains("unavailable"), "{stderr}");
}

/// An owner-only records key file in `dir`.
fn records_key_file(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("records.key");
    std::fs::write(&path, "a-records-key-for-the-cli-tests-0123456789\n").expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// On Ozone the gateway does not start without its records key, and says
/// in one line how to make one, before it tries the cluster.
#[test]
fn ozone_without_a_records_key_exits_2_saying_how_to_make_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = gateway()
        .args([
            "--backend",
            "ozone",
            "--om",
            "127.0.0.1:9",
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("ozone_records_key_file"), "{stderr}");
    assert!(stderr.contains("openssl rand -base64 32"), "{stderr}");
}

#[test]
fn unknown_config_keys_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, "listen = \"127.0.0.1:0\"\nlisen = \"typo\"\n").expect("write");
    let output = gateway().arg("--config").arg(&path).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("lisen"));
}

#[test]
fn admin_without_credentials_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = gateway()
        .args(["admin", "keys", "list", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no root key"));
}

/// The endpoint a started server prints, once it is serving.
fn endpoint_line(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("piped stdout");
    BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            line.strip_prefix("s3-gateway listening on ")
                .map(str::to_string)
        })
        .expect("the server prints its endpoint")
}

const ROOT_ACCESS_KEY: &str = "CLIROOTACCESSKEY0001";
const ROOT_SECRET_KEY: &str = "cliroot-secret-cliroot-secret-cliroot-00";

/// The real binary serving on a free port; killed on drop.
struct Served {
    child: Child,
    endpoint: String,
}

impl Served {
    fn start(data_dir: &std::path::Path) -> Self {
        let mut command = gateway();
        command
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .env("S3GW_ROOT_ACCESS_KEY", ROOT_ACCESS_KEY)
            .env("S3GW_ROOT_SECRET_KEY", ROOT_SECRET_KEY);
        Self::spawn(command)
    }

    /// Starts `command` and waits for the endpoint line.
    fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let endpoint = endpoint_line(&mut child);
        Self { child, endpoint }
    }

    fn admin(&self, args: &[&str]) -> Output {
        gateway()
            .args(["admin", "--endpoint", &self.endpoint])
            .args(args)
            .env("S3GW_ROOT_ACCESS_KEY", ROOT_ACCESS_KEY)
            .env("S3GW_ROOT_SECRET_KEY", ROOT_SECRET_KEY)
            .output()
            .expect("admin runs")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn admin_keys_create_list_delete() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Served::start(dir.path());

    let created = server.admin(&["keys", "create", "--name", "alice"]);
    assert!(created.status.success(), "{created:?}");
    let block = String::from_utf8_lossy(&created.stdout).to_string();
    let keys_file = dir.path().join("alice.toml");
    std::fs::write(&keys_file, &block).expect("write");
    let keys =
        s3_gateway::credentials_file::load(&keys_file).expect("create prints a [[keys]] block");
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].name, "alice");
    let access_key = keys[0].access_key.clone();

    let listed = server.admin(&["keys", "list"]);
    assert!(listed.status.success(), "{listed:?}");
    let listing = String::from_utf8_lossy(&listed.stdout).to_string();
    let rows: Vec<Vec<&str>> = listing
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "ACCESS_KEY", "ROOT"]);
    assert!(
        rows.contains(&vec!["alice", access_key.as_str(), "no"]),
        "{listing}"
    );
    assert!(
        rows.contains(&vec!["root", ROOT_ACCESS_KEY, "yes"]),
        "{listing}"
    );
    let json = server.admin(&["keys", "list", "--json"]);
    assert!(json.status.success(), "{json:?}");
    let objects: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    assert_eq!(objects.len(), rows.len() - 1, "one line per key, no header");
    assert!(
        objects.contains(
            &serde_json::json!({"name": "alice", "access_key": access_key, "is_root": false})
        ),
        "{objects:?}"
    );

    let again = server.admin(&["keys", "create", "--name", "alice"]);
    assert_eq!(again.status.code(), Some(1), "a second alice: {again:?}");
    let message = String::from_utf8_lossy(&again.stderr);
    assert!(message.contains("KeyNameInUse"), "{message}");
    let bad = server.admin(&["keys", "create", "--name", "bad/name"]);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(
        message.contains("InvalidArgument") && message.contains("1 to 64 characters"),
        "{message}"
    );
    let listed = server.admin(&["keys", "list"]);
    let listing = String::from_utf8_lossy(&listed.stdout).to_string();
    let alices = listing.lines().filter(|l| l.starts_with("alice ")).count();
    assert_eq!(alices, 1, "{listing}");

    let deleted = server.admin(&["keys", "delete", &access_key]);
    assert!(deleted.status.success(), "{deleted:?}");
    assert!(String::from_utf8_lossy(&deleted.stdout).contains(&access_key));
    let again = server.admin(&["keys", "delete", &access_key]);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
}

/// The admin command a started server prints, run as printed (with the
/// test's binary), its environment holding no root key.
fn run_printed_admin_command(mut server: Command) -> Output {
    let mut child = server
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut command = None;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if let Some(rest) = line.strip_prefix("Manage keys with: ") {
            let (printed, _) = rest.split_once(" (").expect("a note after the command");
            command = Some(printed.to_string());
        }
        if line.starts_with("s3-gateway listening on ") {
            break;
        }
    }
    let command = command.expect("a Manage keys line before the endpoint");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "s3-gateway", "{command}");
    assert!(!command.contains('\''), "plain words only here: {command}");
    let output = gateway().args(&words[1..]).output().expect("admin runs");
    let _ = child.kill();
    let _ = child.wait();
    output
}

#[test]
fn the_printed_admin_command_works_with_a_root_key_from_a_credentials_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = dir.path().join("keys.toml");
    std::fs::write(
        &keys,
        format!(
            "[[keys]]\nname = \"ops\"\naccess_key = \"{ROOT_ACCESS_KEY}\"\nsecret_key = \"{ROOT_SECRET_KEY}\"\nroot = true\n"
        ),
    )
    .expect("write keys");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let data = dir.path().join("data");
    let mut server = gateway();
    server
        .args(["--listen", "127.0.0.1:0", "--credentials"])
        .arg(&keys)
        .arg("--data-dir")
        .arg(&data);
    let listed = run_printed_admin_command(server);
    assert!(listed.status.success(), "{listed:?}");
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(stdout.contains(ROOT_ACCESS_KEY), "{stdout}");
    assert!(
        !data.join("root-credentials.toml").exists(),
        "the credentials file's root key is the root key"
    );
}

#[test]
fn admin_check_round_trips_an_object_and_fails_on_a_bad_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Served::start(dir.path());

    let checked = server.admin(&["check"]);
    assert!(checked.status.success(), "{checked:?}");
    let report = String::from_utf8_lossy(&checked.stdout).to_string();
    assert!(
        report.contains("GET returned the same 262144 bytes"),
        "{report}"
    );
    assert!(report.contains("GET answers 404"), "{report}");

    let wrong_key = gateway()
        .args(["admin", "--endpoint", &server.endpoint, "check"])
        .env("S3GW_ROOT_ACCESS_KEY", ROOT_ACCESS_KEY)
        .env("S3GW_ROOT_SECRET_KEY", "not-the-secret-key")
        .output()
        .expect("admin runs");
    assert_eq!(wrong_key.status.code(), Some(1), "{wrong_key:?}");
    let message = String::from_utf8_lossy(&wrong_key.stderr);
    assert!(
        message.contains("CreateBucket failed") && message.contains("SignatureDoesNotMatch"),
        "{message}"
    );
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn admin_reads_the_servers_configuration_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!("listen = \"127.0.0.1:{port}\"\nregion = \"eu-west-3\"\ndata_dir = \"data\"\n"),
    )
    .expect("write");
    let mut command = gateway();
    command.arg("--config").arg(&config);
    let server = Served::spawn(command);
    assert_eq!(server.endpoint, format!("http://127.0.0.1:{port}"));
    // No endpoint, region or key given: all from the file (the root key
    // from the data dir it names), as the server read them.
    let listed = gateway()
        .args(["admin", "--config"])
        .arg(&config)
        .args(["keys", "list"])
        .output()
        .expect("admin runs");
    assert!(listed.status.success(), "{listed:?}");
    assert!(String::from_utf8_lossy(&listed.stdout).contains("root"));
    // A region the server does not answer for is refused by the server.
    let wrong = gateway()
        .args(["admin", "--config"])
        .arg(&config)
        .args(["--region", "us-east-1", "keys", "list"])
        .output()
        .expect("admin runs");
    assert_eq!(wrong.status.code(), Some(1), "{wrong:?}");
    let message = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        message.contains("AuthorizationHeaderMalformed"),
        "{message}"
    );
    assert!(
        !message.contains("&apos;") && !message.contains("&quot;"),
        "no XML escapes: {message}"
    );
}

/// A gateway serving HTTPS with the fixtures `cert` and `key`, and its data
/// dir (kept while the server runs).
fn https_server(cert: &str, key: &str) -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = gateway();
    command
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .arg("--tls-cert")
        .arg(fixture(cert))
        .arg("--tls-key")
        .arg(fixture(key))
        .env("S3GW_ROOT_ACCESS_KEY", ROOT_ACCESS_KEY)
        .env("S3GW_ROOT_SECRET_KEY", ROOT_SECRET_KEY);
    (dir, Served::spawn(command))
}

#[test]
fn admin_trusts_a_private_ca_from_ca_cert_or_ssl_cert_file_and_names_the_certificate_error() {
    let (_dir, server) = https_server("tls-cert.pem", "tls-key.pem");
    assert!(
        server.endpoint.starts_with("https://"),
        "{}",
        server.endpoint
    );

    let untrusted = server.admin(&["keys", "list"]);
    assert_eq!(untrusted.status.code(), Some(1), "{untrusted:?}");
    let message = String::from_utf8_lossy(&untrusted.stderr);
    assert!(message.contains("certificate"), "the real cause: {message}");
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");

    let ca = fixture("test-ca.pem");
    let with_flag = server.admin(&["--ca-cert", &ca.to_string_lossy(), "keys", "list"]);
    assert!(with_flag.status.success(), "{with_flag:?}");
    let with_env = gateway()
        .args(["admin", "--endpoint", &server.endpoint, "keys", "list"])
        .env("S3GW_ROOT_ACCESS_KEY", ROOT_ACCESS_KEY)
        .env("S3GW_ROOT_SECRET_KEY", ROOT_SECRET_KEY)
        .env("SSL_CERT_FILE", &ca)
        .output()
        .expect("admin runs");
    assert!(with_env.status.success(), "{with_env:?}");

    let not_pem = server.admin(&[
        "--ca-cert",
        &fixture("tls-key.pem").to_string_lossy(),
        "keys",
        "list",
    ]);
    assert_eq!(not_pem.status.code(), Some(2), "{not_pem:?}");
    assert!(String::from_utf8_lossy(&not_pem.stderr).contains("cannot read CA certificates"));
}

#[test]
fn admin_trusts_a_plain_self_signed_certificate_given_as_its_ca_cert() {
    // `openssl req -x509` marks the certificate a CA; webpki alone refuses
    // one served as a server's own (CaUsedAsEndEntity), aws and curl take it.
    let (_dir, server) = https_server("self-signed-cert.pem", "self-signed-key.pem");
    let untrusted = server.admin(&["keys", "list"]);
    assert_eq!(untrusted.status.code(), Some(1), "{untrusted:?}");
    let certificate = fixture("self-signed-cert.pem");
    let trusted = server.admin(&["--ca-cert", &certificate.to_string_lossy(), "keys", "list"]);
    assert!(trusted.status.success(), "{trusted:?}");
    // Another file's certificate is no licence for this one.
    let other = fixture("test-ca.pem");
    let refused = server.admin(&["--ca-cert", &other.to_string_lossy(), "keys", "list"]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
}

#[test]
fn version_names_the_commit_and_its_date() {
    let flag = gateway().arg("--version").output().expect("runs");
    let command = gateway().arg("version").output().expect("runs");
    assert!(flag.status.success() && command.status.success());
    let text = String::from_utf8_lossy(&flag.stdout).trim().to_owned();
    assert_eq!(text, String::from_utf8_lossy(&command.stdout).trim());
    let build = text
        .strip_prefix(concat!("s3-gateway ", env!("CARGO_PKG_VERSION"), " ("))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{text}"));
    let (commit, date) = build.split_once(' ').unwrap_or_else(|| panic!("{text}"));
    let hex = commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    assert!(hex || commit == "unknown", "{text}");
    let iso = date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-';
    assert!(iso || date == "unknown", "{text}");
}

#[test]
fn completions_and_the_man_page_come_from_the_cli_definition() {
    let bash = gateway()
        .args(["completions", "bash"])
        .output()
        .expect("runs");
    assert!(bash.status.success(), "{bash:?}");
    let script = String::from_utf8_lossy(&bash.stdout);
    for word in ["admin", "buckets", "set-owner", "--force", "--data-dir"] {
        assert!(script.contains(word), "bash completions lack {word}");
    }
    // Bash takes the script and registers the completion.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s3-gateway.bash");
    std::fs::write(&file, script.as_bytes()).unwrap();
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p s3-gateway",
            file.display()
        ))
        .output()
        .expect("bash runs");
    assert!(loaded.status.success(), "{loaded:?}");

    let man = gateway().arg("man").output().expect("runs");
    assert!(man.status.success(), "{man:?}");
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        page.starts_with(".ie") && page.contains(".TH s3-gateway 1"),
        "{page}"
    );
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "the man page lacks {section}");
    }
    assert!(page.contains("s3\\-gateway\\-admin(1)"), "{page}");
    // And the pages it names, one per subcommand.
    let pages = gateway()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(pages.status.success(), "{pages:?}");
    for name in [
        "s3-gateway.1",
        "s3-gateway-admin.1",
        "s3-gateway-admin-buckets-set-owner.1",
    ] {
        assert!(dir.path().join(name).is_file(), "no {name}");
    }

    let unknown = gateway()
        .args(["completions", "nosh"])
        .output()
        .expect("runs");
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
}

#[test]
fn help_shows_defaults_and_no_placeholders_or_empty_env_values() {
    let serve = gateway().arg("--help").output().expect("runs");
    // Lines joined: clap wraps help at the terminal's width when a crate in
    // the build (divan, in the benchmarks) turns on its `wrap_help`.
    let text = String::from_utf8_lossy(&serve.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for expected in [
        "[env: S3GW_BLOCK_SIZE] [default: 256MiB]",
        "[env: S3GW_CHUNK_SIZE] [default: 256KiB (embedded), 1MiB (ozone)]",
        "[env: S3GW_READ_BUFFER] [default: 256KiB] (embedded only)",
        "e.g. 1MiB",
    ] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    for args in [
        &["admin", "--help"][..],
        &["admin", "keys", "create", "--help"],
        &["admin", "keys", "delete", "--help"],
        &["admin", "check", "--help"],
    ] {
        let output = gateway()
            .args(args)
            .env("S3GW_ENDPOINT", "")
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{args:?}");
        assert!(!text.contains("admin_"), "{args:?} leaks an id: {text}");
        assert!(
            !text.contains("=]"),
            "{args:?} shows an empty env value: {text}"
        );
        for line in text.lines().filter(|l| l.trim_start().starts_with("--")) {
            assert!(
                line.trim().contains("  "),
                "{args:?}: {line} has no description"
            );
        }
    }
    let missing_name = gateway()
        .args(["admin", "keys", "create"])
        .output()
        .expect("runs");
    assert_eq!(missing_name.status.code(), Some(2));
    let usage = String::from_utf8_lossy(&missing_name.stderr);
    assert!(usage.contains("--name <NAME>"), "{usage}");
    assert!(
        !usage.contains("--access-key <"),
        "keys are not required: {usage}"
    );
}

/// Starts the gateway with `args`, waits for its endpoint line, stops it and
/// returns the endpoint and what it logged.
fn start_and_stop(args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = gateway()
        .args(args)
        .arg("--data-dir")
        .arg(dir.path())
        .env("S3GW_ROOT_ACCESS_KEY", ROOT_ACCESS_KEY)
        .env("S3GW_ROOT_SECRET_KEY", ROOT_SECRET_KEY)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("server starts");
    let endpoint = endpoint_line(&mut child);
    let _ = child.kill();
    let output = child.wait_with_output().expect("stopped");
    (
        endpoint,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_listen_host_name_serves_on_its_addresses_and_logs_them() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let listen = format!("localhost:{port}");
    let (endpoint, log) = start_and_stop(&["--listen", &listen]);
    assert!(endpoint.ends_with(&format!(":{port}")), "{endpoint}");
    let serving = log
        .lines()
        .find(|line| line.contains("serving"))
        .unwrap_or_else(|| panic!("no serving line: {log}"));
    let resolved: Vec<String> = std::net::ToSocketAddrs::to_socket_addrs(&listen)
        .expect("localhost resolves")
        .map(|addr| addr.to_string())
        .collect();
    for addr in &resolved {
        assert!(
            serving.contains(addr.as_str()),
            "{addr} not logged: {serving}"
        );
    }
}

#[test]
fn a_rounded_read_buffer_logs_the_value_in_effect() {
    let (_, log) = start_and_stop(&["--listen", "127.0.0.1:0", "--read-buffer", "100KiB"]);
    assert!(
        log.contains("read_buffer=102400") && log.contains("in_effect=98304"),
        "{log}"
    );
    let (_, log) = start_and_stop(&["--listen", "127.0.0.1:0", "--read-buffer", "1KiB"]);
    assert!(
        log.contains("in_effect=16384"),
        "rounded up to one window: {log}"
    );
    let (_, log) = start_and_stop(&["--listen", "127.0.0.1:0", "--read-buffer", "64KiB"]);
    assert!(
        !log.contains("in_effect"),
        "a whole number of windows: {log}"
    );
}
