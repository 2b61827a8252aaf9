use std::collections::HashMap;
use std::io::Write;

use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn file_with(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(text.as_bytes()).expect("write temp file");
    file
}

fn error_of(flags: &ServeArgs, env: &[(&str, &str)]) -> String {
    match Config::load_from(flags, env_of(env)) {
        Ok(config) => panic!("expected an error, got {config:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn operations_settings_have_defaults_and_are_checked() {
    let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("defaults");
    assert_eq!(config.log_format, LogFormat::Text);
    assert!(config.settings.access_log);
    assert_eq!(config.settings.drain_delay, Duration::ZERO);
    let set =
        |var: &str, value: &str| Config::load_from(&ServeArgs::default(), env_of(&[(var, value)]));
    assert_eq!(
        set("S3GW_LOG_FORMAT", "json").expect("json").log_format,
        LogFormat::Json
    );
    assert_eq!(config.connection_runtime, ConnectionRuntime::Shared);
    assert_eq!(
        set("S3GW_CONNECTION_RUNTIME", "per-thread")
            .expect("per-thread")
            .connection_runtime,
        ConnectionRuntime::PerThread
    );
    assert!(
        set("S3GW_CONNECTION_RUNTIME", "per-core")
            .unwrap_err()
            .to_string()
            .contains("per-thread")
    );
    assert!(
        !set("S3GW_ACCESS_LOG", "false")
            .expect("off")
            .settings
            .access_log
    );
    assert_eq!(
        set("S3GW_DRAIN_DELAY", "5s")
            .expect("delay")
            .settings
            .drain_delay,
        Duration::from_secs(5)
    );
    for (var, value) in [
        ("S3GW_LOG_FORMAT", "xml"),
        ("S3GW_ACCESS_LOG", "yes"),
        ("S3GW_DRAIN_DELAY", "soon"),
    ] {
        let error = set(var, value).expect_err(value).to_string();
        assert!(error.contains(var), "{error}");
    }
}

#[test]
fn defaults_apply_when_nothing_is_set() {
    let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
    assert_eq!(config.listen, ["127.0.0.1:9878".parse().expect("addr")]);
    assert_eq!(config.settings.data_dir, PathBuf::from("./data"));
    assert_eq!(config.settings.region, "us-east-1");
    assert_eq!(config.settings.domain, None);
    assert_eq!(config.settings.log_level, "info");
    assert!(config.keys.is_empty());
    assert_eq!(config.root_key, None);
    assert_eq!(config.tls, None);
}

#[test]
fn file_then_env_then_flags_override_each_other() {
    let file = file_with(
        "listen = \"0.0.0.0:1000\"\nregion = \"eu-west-1\"\ndomain = \"s3.file\"\nlog_level = \"warn\"\nblock_size = 1048576\n",
    );
    let flags =
        ServeArgs::config(file.path().to_path_buf()).with(settings::LISTEN, "127.0.0.1:3000");
    let env = [
        ("S3GW_LISTEN", "127.0.0.1:2000"),
        ("S3GW_REGION", "eu-central-1"),
        ("S3GW_CHUNK_SIZE", "64KiB"),
    ];
    let config = Config::load_from(&flags, env_of(&env)).expect("valid");
    assert_eq!(
        config.listen,
        ["127.0.0.1:3000".parse().expect("addr")],
        "flag wins"
    );
    assert_eq!(config.settings.region, "eu-central-1", "env beats file");
    assert_eq!(
        config.settings.domain.as_deref(),
        Some("s3.file"),
        "file beats default"
    );
    assert_eq!(config.settings.log_level, "warn");
    assert_eq!(config.settings.block_size, Some(1 << 20));
    assert_eq!(config.settings.chunk_size, Some(64 << 10));
}

#[test]
fn config_file_can_come_from_the_environment() {
    let file = file_with("region = \"ap-south-1\"\n");
    let path = file.path().to_string_lossy().to_string();
    let config =
        Config::load_from(&ServeArgs::default(), env_of(&[("S3GW_CONFIG", &path)])).expect("valid");
    assert_eq!(config.settings.region, "ap-south-1");
}

#[test]
fn relative_paths_in_the_file_are_relative_to_it() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("gw.toml");
    std::fs::write(&path, "data_dir = \"store\"\n").expect("write");
    let flags = ServeArgs::config(path);
    let config = Config::load_from(&flags, env_of(&[])).expect("valid");
    assert_eq!(config.settings.data_dir, dir.path().join("store"));
}

#[test]
fn a_listen_host_name_resolves_to_its_addresses() {
    let flags = ServeArgs::default().with(settings::LISTEN, "localhost:9000");
    let config = Config::load_from(&flags, env_of(&[])).expect("valid");
    assert!(!config.listen.is_empty());
    for addr in &config.listen {
        assert!(addr.ip().is_loopback(), "{addr}");
        assert_eq!(addr.port(), 9000);
    }
    let flags = ServeArgs::default().with(settings::LISTEN, "no-such-host.invalid:9000");
    let message = error_of(&flags, &[]);
    assert!(
        message.contains("--listen") && message.contains("resolve"),
        "{message}"
    );
}

#[test]
fn a_bad_listen_address_names_its_source() {
    let message = error_of(&ServeArgs::default(), &[("S3GW_LISTEN", "nowhere")]);
    assert!(message.contains("S3GW_LISTEN"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    let flags = ServeArgs::default().with(settings::LISTEN, "1.2.3.4");
    assert!(error_of(&flags, &[]).contains("--listen"));
}

#[test]
fn an_unknown_key_in_the_file_is_refused() {
    let file = file_with("listen = \"127.0.0.1:1\"\nlisten_addr = \"x\"\n");
    let flags = ServeArgs::config(file.path().to_path_buf());
    let message = error_of(&flags, &[]);
    assert!(message.contains("listen_addr"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

#[test]
fn a_duplicate_key_in_the_file_is_named() {
    let file =
        file_with("listen = \"127.0.0.1:1\"\nregion = \"eu-west-3\"\nregion = \"eu-west-1\"\n");
    let message = error_of(&ServeArgs::config(file.path()), &[]);
    assert!(message.contains("duplicate key"), "{message}");
    assert!(message.contains("`region`"), "names the key: {message}");
    assert!(message.contains("line 3"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

#[test]
fn declared_storage_defaults_are_storage_clients() {
    use settings::Default;
    let embedded = StorageConfig::default();
    let ozone = OzoneStorageConfig::new(Vec::new());
    let given = |text: &str| layer::Given::new(text, "the declaration");
    let size = |text: &str| layer::parse_size(&given(text)).expect(text);
    let duration = |text: &str| layer::parse_duration(&given(text)).expect(text).as_secs();
    for s in SETTINGS {
        let Default::Storage {
            embedded: e,
            ozone: o,
        } = s.default
        else {
            continue;
        };
        let (embedded_actual, ozone_actual): (Option<u64>, Option<u64>) = match s.key {
            "block_size" => (Some(embedded.block_size), Some(ozone.block_size)),
            "chunk_size" => (
                Some(embedded.chunk_size as u64),
                Some(ozone.chunk_size as u64),
            ),
            "read_buffer" => (Some(embedded.read_buffer as u64), None),
            "small_block_max" => (Some(embedded.small_block_max as u64), None),
            "object_with_key_max" => (Some(embedded.object_with_key_max as u64), None),
            "metadata_db_cache" => (Some(embedded.metadata_db_cache as u64), None),
            "small_block_db_cache" => (Some(embedded.small_block_db_cache as u64), None),
            "multipart_upload_expiry" => (Some(embedded.multipart_upload_expiry.as_secs()), None),
            "open_key_expiry" => (Some(embedded.open_key_expiry.as_secs()), None),
            "reclaim_interval" => (Some(embedded.reclaim_interval.as_secs()), None),
            "reclaim_grace" => (Some(embedded.reclaim_grace.as_secs()), None),
            "key_cache_ttl" => (
                Some(embedded.key_cache_ttl.as_secs()),
                Some(ozone.key_cache_ttl.as_secs()),
            ),
            "metadata_cache_ttl" => (
                Some(embedded.metadata_cache_ttl.as_secs()),
                Some(ozone.metadata_cache_ttl.as_secs()),
            ),
            "unknown_key_cache_ttl" => (
                Some(embedded.unknown_key_cache_ttl.as_secs()),
                Some(ozone.unknown_key_cache_ttl.as_secs()),
            ),
            "ozone_connect_timeout" => (None, Some(ozone.connect_timeout.as_secs())),
            "ozone_request_timeout" => (None, Some(ozone.request_timeout.as_secs())),
            "ozone_blocks_in_flight" => (None, Some(ozone.blocks_in_flight as u64)),
            "ozone_chunks_in_flight" => (None, Some(ozone.chunks_in_flight as u64)),
            "ozone_user_secrets" => (None, Some(u64::from(ozone.user_secrets))),
            other => panic!("{other}: no storage-client default to compare with"),
        };
        let parse = |text: &str| match s.kind {
            settings::Kind::Size { .. } | settings::Kind::SizeOrOff { .. } => size(text),
            settings::Kind::Duration { .. } => duration(text),
            settings::Kind::Flag => u64::from(text == "true"),
            settings::Kind::Count { .. } => text.parse().expect(text),
            _ => panic!(
                "{}: a storage default is a size, a duration, a count or a flag",
                s.key
            ),
        };
        assert_eq!(e.map(parse), embedded_actual, "{} on embedded", s.key);
        assert_eq!(o.map(parse), ozone_actual, "{} on ozone", s.key);
    }
}

#[test]
fn an_unreadable_config_file_is_refused() {
    let flags = ServeArgs::config(PathBuf::from("/nonexistent/s3gw.toml"));
    assert!(error_of(&flags, &[]).contains("cannot read config file"));
}

#[test]
fn root_key_needs_both_halves() {
    let message = error_of(
        &ServeArgs::default(),
        &[("S3GW_ROOT_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE")],
    );
    assert!(message.contains("together"), "{message}");
    let env = [
        ("S3GW_ROOT_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE"),
        (
            "S3GW_ROOT_SECRET_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
    ];
    let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
    let root = config.root_key.expect("root key");
    assert!(root.root);
    assert_eq!(root.access_key, "AKIAIOSFODNN7EXAMPLE");
}

#[test]
fn credentials_file_is_loaded_and_checked() {
    let file = file_with(
        "[[keys]]\nname = \"alice\"\naccess_key = \"ALICEKEY00000001\"\nsecret_key = \"alice-secret-alice-secret-alice-secret\"\n\n[[keys]]\nname = \"bob\"\naccess_key = \"BOBKEY0000000001\"\nsecret_key = \"bob-secret-bob-secret-bob-secret-bob\"\nroot = true\n",
    );
    let flags = ServeArgs::default().with(settings::CREDENTIALS, file.path().to_string_lossy());
    let config = Config::load_from(&flags, env_of(&[])).expect("valid");
    assert_eq!(config.keys.len(), 2);
    assert_eq!(config.keys[0].name, "alice");
    assert!(!config.keys[0].root);
    assert!(config.keys[1].root);
}

#[test]
fn bad_credentials_files_are_refused() {
    let key = |access: &str, secret: &str| {
        format!("[[keys]]\nname = \"a\"\naccess_key = \"{access}\"\nsecret_key = \"{secret}\"\n")
    };
    let good_secret = "0123456789abcdefghijklmnopqrstuvwxyz";
    let cases = [
        (key("AKIA/0000000000000", good_secret), "access_key"),
        (key("AKIA.0000000000000", good_secret), "access_key"),
        (key("akia00000000000000", good_secret), "access_key"),
        (key("AKIA00000000000", good_secret), "16 to 128"),
        (key(&"A".repeat(129), good_secret), "access_key"),
        (key("AKIA000000000000", "short"), "secret_key"),
        (key("AKIA000000000000", &good_secret[..29]), "30 to 128"),
        (
            key("AKIA000000000000", "with a space in the secret 000000"),
            "secret_key",
        ),
        (
            "[[keys]]\nname = \"a\"\naccess_key = \"AKIA000000000000\"\n".to_owned(),
            "secret_key",
        ),
        (
            key("AKIA000000000000", good_secret) + "extra = 1\n",
            "extra",
        ),
        (
            key("AKIA000000000000", good_secret) + &key("AKIA000000000000", good_secret),
            "twice",
        ),
        (
            key("AKIA000000000000", good_secret) + &key("AKIA000000000001", good_secret),
            "the name appears twice",
        ),
        (
            key("AKIA000000000000", good_secret).replace("name = \"a\"", "name = \"bad/name\""),
            "name must be",
        ),
    ];
    for (text, expected) in cases {
        let file = file_with(&text);
        let flags = ServeArgs::default().with(settings::CREDENTIALS, file.path().to_string_lossy());
        let message = error_of(&flags, &[]);
        assert!(message.contains(expected), "{text:?} gave {message}");
        assert!(
            message.contains(&file.path().display().to_string()),
            "names the file: {message}"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn a_credentials_file_others_may_read_is_refused_like_the_system_secret() {
    use std::os::unix::fs::PermissionsExt;
    let secret = "alice-secret-alice-secret-alice-secret";
    let file = file_with(&format!(
        "[[keys]]\nname = \"alice\"\naccess_key = \"ALICEKEY00000001\"\nsecret_key = \"{secret}\"\n"
    ));
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = file.path().to_string_lossy().to_string();
    let message = error_of(
        &ServeArgs::default().with(settings::CREDENTIALS, &path),
        &[],
    );
    assert!(message.contains(": --credentials: "), "{message}");
    assert!(message.contains(&path), "{message}");
    assert!(message.contains("mode 644"), "{message}");
    assert!(message.contains("chmod 600"), "{message}");
    assert!(
        !message.contains('\n') && !message.contains(secret),
        "{message}"
    );
    let from_env = error_of(&ServeArgs::default(), &[("S3GW_CREDENTIALS", &path)]);
    assert!(from_env.contains(": S3GW_CREDENTIALS: "), "{from_env}");

    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    let flags = ServeArgs::default().with(settings::CREDENTIALS, &path);
    assert_eq!(
        Config::load_from(&flags, env_of(&[]))
            .expect("valid")
            .keys
            .len(),
        1
    );
}

#[test]
fn the_sse_master_key_file_is_loaded_from_an_owner_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let key = "q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=";
    let file = file_with(&format!("old {key}\nnew {key}\n"));
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = file.path().to_string_lossy().to_string();
    let config = Config::load_from(
        &ServeArgs::default(),
        env_of(&[("S3GW_SSE_MASTER_KEY_FILE", &path)]),
    )
    .expect("valid");
    assert_eq!(config.sse_master_keys.expect("loaded").active().id, "new");
    assert!(
        Config::load_from(&ServeArgs::default(), env_of(&[]))
            .expect("defaults")
            .sse_master_keys
            .is_none()
    );
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let message = error_of(
        &ServeArgs::default().with(settings::SSE_MASTER_KEY_FILE, &path),
        &[],
    );
    assert!(message.contains("--sse-master-key-file"), "{message}");
    assert!(message.contains("chmod 600"), "{message}");
    assert!(
        !message.contains(key) && !message.contains('\n'),
        "{message}"
    );
}

#[test]
fn a_weak_root_key_in_the_environment_is_refused() {
    for (access, secret) in [
        ("AKIAIOSFODNN7EXAMPLE", "short-secret"),
        (
            "S3GW.ROOT00000001",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
    ] {
        let env = [
            ("S3GW_ROOT_ACCESS_KEY", access),
            ("S3GW_ROOT_SECRET_KEY", secret),
        ];
        let message = error_of(&ServeArgs::default(), &env);
        assert!(message.contains("S3GW_ROOT_ACCESS_KEY"), "{message}");
        assert!(
            !message.contains(secret),
            "never echoes the secret: {message}"
        );
    }
}

#[test]
fn small_block_max_takes_zero_for_off_and_at_most_a_mib() {
    for (text, expected) in [("0", 0), ("64KiB", 64 << 10), ("1MiB", 1 << 20)] {
        let env = [("S3GW_SMALL_BLOCK_MAX", text)];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect(text);
        assert_eq!(config.settings.small_block_max, Some(expected), "{text}");
        assert_eq!(config.storage_config().small_block_max, expected as usize);
    }
    for bad in ["2MiB", "-1", "0x"] {
        let message = error_of(&ServeArgs::default(), &[("S3GW_SMALL_BLOCK_MAX", bad)]);
        assert!(
            message.contains("S3GW_SMALL_BLOCK_MAX"),
            "{bad:?}: {message}"
        );
    }
}

#[test]
fn sizes_accept_units_and_refuse_nonsense() {
    let ok = [
        ("4194304", 4 << 20),
        ("64KiB", 64 << 10),
        ("4MiB", 4 << 20),
        ("1G", 1 << 30),
    ];
    for (text, expected) in ok {
        let env = [("S3GW_BLOCK_SIZE", text)];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect(text);
        assert_eq!(config.settings.block_size, Some(expected), "{text}");
    }
    for bad in ["", "0", "4XB", "-1", "99999999999999999999"] {
        let message = error_of(&ServeArgs::default(), &[("S3GW_BLOCK_SIZE", bad)]);
        assert!(message.contains("S3GW_BLOCK_SIZE"), "{bad:?}: {message}");
    }
    let env = [("S3GW_BLOCK_SIZE", "1MiB"), ("S3GW_CHUNK_SIZE", "2MiB")];
    let message = error_of(&ServeArgs::default(), &env);
    assert!(message.contains("larger than the block size"), "{message}");
    let flags = ServeArgs::default().with(settings::CHUNK_SIZE, "2MiB");
    let message = error_of(&flags, &env);
    assert!(
        message.contains("--chunk-size") && message.contains("S3GW_BLOCK_SIZE"),
        "names both sources: {message}"
    );
}

#[test]
fn other_settings_are_validated() {
    assert!(error_of(&ServeArgs::default(), &[("S3GW_REGION", "US East")]).contains("S3GW_REGION"));
    assert!(
        error_of(&ServeArgs::default(), &[("S3GW_DOMAIN", "http://x/")]).contains("S3GW_DOMAIN")
    );
    assert!(
        error_of(&ServeArgs::default(), &[("S3GW_LOG_LEVEL", "s3=verbose[")])
            .contains("S3GW_LOG_LEVEL")
    );
    assert!(error_of(&ServeArgs::default(), &[("S3GW_TLS_CERT", "cert.pem")]).contains("both"));
}

#[test]
fn durations_accept_units_and_refuse_nonsense() {
    let ok = [
        ("90s", 90),
        ("15m", 15 * 60),
        ("2h", 2 * 3600),
        ("7d", 7 * 86400),
        ("3600", 3600),
        ("0", 0),
        ("3650d", 3650 * 86400),
    ];
    for (text, seconds) in ok {
        let env = [("S3GW_KEY_CACHE_TTL", text)];
        let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect(text);
        assert_eq!(
            config.settings.key_cache_ttl,
            Some(Duration::from_secs(seconds)),
            "{text}"
        );
    }
    for bad in [
        "",
        "1w",
        "15M",
        "-1",
        "1.5h",
        "1h30m",
        "h",
        "3651d",
        "99999999999999999999",
    ] {
        let message = error_of(&ServeArgs::default(), &[("S3GW_KEY_CACHE_TTL", bad)]);
        assert!(message.contains("S3GW_KEY_CACHE_TTL"), "{bad:?}: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn a_zero_multipart_upload_expiry_is_refused() {
    let flags = ServeArgs::default().with(settings::MULTIPART_UPLOAD_EXPIRY, "0s");
    let message = error_of(&flags, &[]);
    assert!(message.contains("--multipart-upload-expiry"), "{message}");
    assert!(message.contains("at least 1s"), "{message}");
}

#[test]
fn console_timeouts_are_checked_with_the_console_off() {
    for key in ["S3GW_CONSOLE_SESSION_IDLE", "S3GW_CONSOLE_SESSION_MAX"] {
        let message = error_of(&ServeArgs::default(), &[(key, "0s")]);
        assert!(message.contains(key), "{message}");
        assert!(message.contains("at least 1s"), "{message}");
    }
    let on = Config::load_from(&ServeArgs::default(), env_of(&[("S3GW_CONSOLE", "true")]));
    assert!(on.expect("valid").console.is_some());
}

#[test]
fn a_zero_reclaim_interval_is_refused_and_a_zero_grace_is_not() {
    let flags = ServeArgs::default().with(settings::RECLAIM_INTERVAL, "0s");
    let message = error_of(&flags, &[]);
    assert!(message.contains("--reclaim-interval"), "{message}");
    assert!(message.contains("at least 1s"), "{message}");
    let flags = ServeArgs::default().with(settings::RECLAIM_GRACE, "0s");
    let config = Config::load_from(&flags, env_of(&[])).expect("valid");
    assert_eq!(config.storage_config().reclaim_grace, Duration::ZERO);
}

#[test]
fn storage_settings_follow_file_then_env_then_flags() {
    let file = file_with(
        "read_buffer = \"64KiB\"\nmultipart_upload_expiry = \"2d\"\nkey_cache_ttl = 5\nmetadata_cache_ttl = \"10m\"\n",
    );
    let flags =
        ServeArgs::config(file.path().to_path_buf()).with(settings::METADATA_CACHE_TTL, "0");
    let env = [
        ("S3GW_MULTIPART_UPLOAD_EXPIRY", "36h"),
        ("S3GW_METADATA_CACHE_TTL", "1m"),
    ];
    let config = Config::load_from(&flags, env_of(&env)).expect("valid");
    assert_eq!(
        config.settings.read_buffer,
        Some(64 << 10),
        "file beats default"
    );
    assert_eq!(
        config.settings.key_cache_ttl,
        Some(Duration::from_secs(5)),
        "TOML integer"
    );
    assert_eq!(
        config.settings.multipart_upload_expiry,
        Some(Duration::from_secs(36 * 3600)),
        "env beats file"
    );
    assert_eq!(
        config.settings.metadata_cache_ttl,
        Some(Duration::ZERO),
        "flag beats env"
    );
}

#[test]
fn unset_storage_settings_keep_the_storage_defaults() {
    let defaults = StorageConfig::default();
    let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
    let storage = config.storage_config();
    assert_eq!(storage.data_dir, config.settings.data_dir);
    assert_eq!(storage.block_size, defaults.block_size);
    assert_eq!(storage.chunk_size, defaults.chunk_size);
    assert_eq!(storage.read_buffer, defaults.read_buffer);
    assert_eq!(
        storage.multipart_upload_expiry,
        defaults.multipart_upload_expiry
    );
    assert_eq!(storage.open_key_expiry, defaults.open_key_expiry);
    assert_eq!(storage.reclaim_interval, defaults.reclaim_interval);
    assert_eq!(storage.reclaim_grace, defaults.reclaim_grace);
    assert_eq!(storage.key_cache_ttl, defaults.key_cache_ttl);
    assert_eq!(storage.metadata_cache_ttl, defaults.metadata_cache_ttl);
    assert_eq!(
        storage.unknown_key_cache_ttl,
        defaults.unknown_key_cache_ttl
    );

    let env = [
        ("S3GW_BLOCK_SIZE", "8MiB"),
        ("S3GW_CHUNK_SIZE", "1MiB"),
        ("S3GW_READ_BUFFER", "512KiB"),
        ("S3GW_MULTIPART_UPLOAD_EXPIRY", "1d"),
        ("S3GW_OPEN_KEY_EXPIRY", "1h"),
        ("S3GW_RECLAIM_INTERVAL", "5s"),
        ("S3GW_RECLAIM_GRACE", "0"),
        ("S3GW_KEY_CACHE_TTL", "2s"),
        ("S3GW_METADATA_CACHE_TTL", "0"),
        ("S3GW_UNKNOWN_KEY_CACHE_TTL", "3s"),
    ];
    let storage = Config::load_from(&ServeArgs::default(), env_of(&env))
        .expect("valid")
        .storage_config();
    assert_eq!(storage.block_size, 8 << 20);
    assert_eq!(storage.chunk_size, 1 << 20);
    assert_eq!(storage.read_buffer, 512 << 10);
    assert_eq!(storage.multipart_upload_expiry, Duration::from_secs(86400));
    assert_eq!(storage.open_key_expiry, Duration::from_secs(3600));
    assert_eq!(storage.reclaim_interval, Duration::from_secs(5));
    assert_eq!(storage.reclaim_grace, Duration::ZERO);
    assert_eq!(storage.key_cache_ttl, Duration::from_secs(2));
    assert_eq!(storage.metadata_cache_ttl, Duration::ZERO);
    assert_eq!(storage.unknown_key_cache_ttl, Duration::from_secs(3));
}

#[test]
fn every_setting_has_a_flag() {
    use clap::{Args, FromArgMatches};
    let mut argv = vec!["s3-gateway".to_owned()];
    for s in SETTINGS {
        argv.extend([s.flag(), "x".to_owned()]);
    }
    let command = ServeArgs::augment_args(clap::Command::new("s3-gateway"));
    let matches = command
        .try_get_matches_from(argv)
        .expect("every flag parses");
    let flags = ServeArgs::from_arg_matches(&matches).expect("flags");
    let layer = flags.0.layer();
    let flagged: Vec<&str> = layer.0.keys().copied().collect();
    let mut named: Vec<&str> = SETTINGS.iter().map(|s| s.key).collect();
    named.sort_unstable();
    assert_eq!(flagged, named);
    assert_eq!(
        layer
            .get(&settings::KEY_CACHE_TTL)
            .map(|s| s.origin.as_str()),
        Some("--key-cache-ttl")
    );
}

fn ozone_settings_of(config: &Config) -> &OzoneSettings {
    match &config.backend {
        Backend::Ozone(ozone) => ozone,
        Backend::Embedded => panic!("expected the ozone back end"),
    }
}

#[test]
fn the_embedded_back_end_is_the_default() {
    let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
    assert_eq!(config.backend, Backend::Embedded);
    let env = [("S3GW_BACKEND", "embedded")];
    let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
    assert_eq!(config.backend, Backend::Embedded);
}

#[test]
fn the_ozone_back_end_takes_one_or_more_oms_from_any_layer() {
    let flags = ServeArgs::default()
        .with(settings::BACKEND, "ozone")
        .with(settings::OM, "om1:8981, om2.example.com:8981,[::1]:8981");
    let config = Config::load_from(&flags, env_of(&[])).expect("valid");
    let ozone = ozone_settings_of(&config);
    assert_eq!(ozone.om, ["om1:8981", "om2.example.com:8981", "[::1]:8981"]);
    assert_eq!(ozone.connect_timeout, None);

    let file = file_with(
        "backend = \"ozone\"\nom = [\"om1:8981\", \"om2:8981\"]\nozone_request_timeout = \"90s\"\n",
    );
    let flags = ServeArgs::config(file.path().to_path_buf());
    let config = Config::load_from(&flags, env_of(&[])).expect("valid");
    let ozone = ozone_settings_of(&config);
    assert_eq!(ozone.om, ["om1:8981", "om2:8981"], "TOML array");
    assert_eq!(ozone.request_timeout, Some(Duration::from_secs(90)));

    let env = [
        ("S3GW_OM", "127.0.0.1:8981"),
        ("S3GW_OZONE_CONNECT_TIMEOUT", "2s"),
    ];
    let config = Config::load_from(&flags, env_of(&env)).expect("valid");
    let ozone = ozone_settings_of(&config);
    assert_eq!(ozone.om, ["127.0.0.1:8981"], "env beats file");
    assert_eq!(ozone.connect_timeout, Some(Duration::from_secs(2)));
}

#[test]
fn the_ozone_records_key_comes_from_an_owner_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let key = "q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=";
    let file = file_with(&format!("{key}\n"));
    let path = file.path().to_string_lossy().to_string();
    let env = [
        ("S3GW_BACKEND", "ozone"),
        ("S3GW_OM", "om1:8981"),
        ("S3GW_OZONE_RECORDS_KEY_FILE", path.as_str()),
    ];
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let message = Config::load_from(&ServeArgs::default(), env_of(&env))
        .expect_err("open to others")
        .to_string();
    assert!(message.contains("chmod 600"), "{message}");
    assert!(!message.contains(key), "{message}");
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
    let storage = config.ozone_storage_config(ozone_settings_of(&config));
    assert_eq!(
        storage.records_key,
        Some(RecordsKey::new(key.as_bytes().to_vec()))
    );
    assert!(!format!("{config:?}").contains(key), "the key in Debug");
}

#[test]
fn the_ozone_system_secret_comes_from_an_owner_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let file = file_with("awsAccessKey=.s3gw\nawsSecret=0123abcd\n");
    let path = file.path().to_string_lossy().to_string();
    let env = [
        ("S3GW_BACKEND", "ozone"),
        ("S3GW_OM", "om1:8981"),
        ("S3GW_OZONE_SYSTEM_SECRET_FILE", path.as_str()),
    ];
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
    let storage = config.ozone_storage_config(ozone_settings_of(&config));
    assert_eq!(
        storage.system_secret,
        Some(SystemSecret::new("0123abcd".into()))
    );
    assert!(
        !format!("{config:?}").contains("0123abcd"),
        "the secret in Debug"
    );

    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let message = error_of(&ServeArgs::default(), &env);
    assert!(
        message.contains("S3GW_OZONE_SYSTEM_SECRET_FILE"),
        "{message}"
    );
    assert!(message.contains("chmod 600"), "{message}");
    assert!(!message.contains("0123abcd"), "{message}");

    let embedded = [("S3GW_OZONE_SYSTEM_SECRET_FILE", path.as_str())];
    assert!(error_of(&ServeArgs::default(), &embedded).contains("--backend ozone"));
}

#[test]
fn the_ozone_back_end_needs_an_om() {
    let env = [("S3GW_BACKEND", "ozone")];
    let message = error_of(&ServeArgs::default(), &env);
    assert!(message.contains("--om HOST:PORT"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

#[test]
fn an_om_without_the_ozone_back_end_is_refused() {
    let flags = ServeArgs::default().with(settings::OM, "127.0.0.1:8981");
    let message = error_of(&flags, &[]);
    assert!(message.contains("--om"), "{message}");
    assert!(message.contains("--backend ozone"), "{message}");
    let env = [("S3GW_OZONE_REQUEST_TIMEOUT", "10s")];
    assert!(error_of(&ServeArgs::default(), &env).contains("S3GW_OZONE_REQUEST_TIMEOUT"));
}

#[test]
fn embedded_only_settings_are_refused_on_ozone() {
    let env = [
        ("S3GW_BACKEND", "ozone"),
        ("S3GW_OM", "om1:8981"),
        ("S3GW_READ_BUFFER", "64KiB"),
    ];
    let message = error_of(&ServeArgs::default(), &env);
    assert!(message.contains("S3GW_READ_BUFFER"), "{message}");
    assert!(message.contains("embedded"), "{message}");
}

#[test]
fn unknown_back_ends_and_bad_om_addresses_are_refused() {
    let message = error_of(&ServeArgs::default(), &[("S3GW_BACKEND", "s3")]);
    assert!(message.contains("S3GW_BACKEND"), "{message}");
    assert!(message.contains("embedded or ozone"), "{message}");
    for bad in [
        "",
        "om1",
        "om1:",
        "om1:0",
        "om1:99999",
        "http://om1:8981",
        ":8981",
        "om1:8981,",
        "om 1:8981",
    ] {
        let env = [("S3GW_BACKEND", "ozone"), ("S3GW_OM", bad)];
        let message = error_of(&ServeArgs::default(), &env);
        assert!(message.contains("S3GW_OM"), "{bad:?}: {message}");
        assert!(message.contains("HOST:PORT"), "{bad:?}: {message}");
    }
    let file = file_with("backend = \"ozone\"\nom = [8981]\n");
    let flags = ServeArgs::config(file.path().to_path_buf());
    assert!(error_of(&flags, &[]).contains("array of strings"));
    let env = [
        ("S3GW_BACKEND", "ozone"),
        ("S3GW_OM", "om1:8981"),
        ("S3GW_OZONE_CONNECT_TIMEOUT", "0"),
    ];
    assert!(error_of(&ServeArgs::default(), &env).contains("at least 1s"));
}

#[test]
fn ozone_storage_settings_keep_the_back_end_defaults_unless_set() {
    let env = [("S3GW_BACKEND", "ozone"), ("S3GW_OM", "om1:8981,om2:8981")];
    let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
    let storage = config.ozone_storage_config(ozone_settings_of(&config));
    let defaults = OzoneStorageConfig::new(Vec::new());
    assert_eq!(storage.om_addresses, ["om1:8981", "om2:8981"]);
    assert_eq!(storage.block_size, defaults.block_size);
    assert_eq!(storage.chunk_size, defaults.chunk_size);
    assert_eq!(storage.connect_timeout, defaults.connect_timeout);
    assert_eq!(storage.request_timeout, defaults.request_timeout);
    assert_eq!(storage.metadata_cache_ttl, defaults.metadata_cache_ttl);
    assert_eq!(
        storage.unknown_key_cache_ttl,
        defaults.unknown_key_cache_ttl
    );

    let env = [
        ("S3GW_BACKEND", "ozone"),
        ("S3GW_OM", "om1:8981"),
        ("S3GW_BLOCK_SIZE", "1MiB"),
        ("S3GW_CHUNK_SIZE", "256KiB"),
        ("S3GW_OZONE_CONNECT_TIMEOUT", "3s"),
        ("S3GW_OZONE_REQUEST_TIMEOUT", "20s"),
        ("S3GW_KEY_CACHE_TTL", "1s"),
    ];
    let config = Config::load_from(&ServeArgs::default(), env_of(&env)).expect("valid");
    let storage = config.ozone_storage_config(ozone_settings_of(&config));
    assert_eq!(storage.block_size, 1 << 20);
    assert_eq!(storage.chunk_size, 256 << 10);
    assert_eq!(storage.connect_timeout, Duration::from_secs(3));
    assert_eq!(storage.request_timeout, Duration::from_secs(20));
    assert_eq!(storage.key_cache_ttl, Duration::from_secs(1));
}

#[test]
fn file_values_of_the_wrong_type_are_refused() {
    for (text, expected) in [
        ("listen = 9878\n", "listen in"),
        ("key_cache_ttl = true\n", "key_cache_ttl in"),
    ] {
        let file = file_with(text);
        let flags = ServeArgs::config(file.path().to_path_buf());
        let message = error_of(&flags, &[]);
        assert!(message.contains(expected), "{text:?} gave {message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn limits_default_and_follow_every_layer() {
    let config = Config::load_from(&ServeArgs::default(), env_of(&[])).expect("valid");
    assert_eq!(config.limits, Limits::default());
    assert!(config.settings.sigv2, "SigV2 is on unless turned off");

    let file = file_with("max_connections = 10\nidle_timeout = \"5s\"\nsigv2 = false\n");
    let flags =
        ServeArgs::config(file.path().to_path_buf()).with(settings::MAX_HEADER_BYTES, "4KiB");
    let env = [
        ("S3GW_MAX_CONNECTIONS", "20"),
        ("S3GW_CHUNK_BUFFER_WAIT", "0"),
    ];
    let config = Config::load_from(&flags, env_of(&env)).expect("valid");
    assert!(!config.settings.sigv2, "TOML boolean");
    assert_eq!(config.limits.max_connections, 20, "env beats file");
    assert_eq!(config.limits.idle_timeout, Duration::from_secs(5));
    assert_eq!(config.limits.max_header_bytes, 4 << 10);
    assert_eq!(config.limits.chunk_buffer_wait, Duration::ZERO);
}

#[test]
fn bad_limits_are_refused() {
    for (var, value, expected) in [
        ("S3GW_MAX_CONNECTIONS", "0", "greater than zero"),
        ("S3GW_MAX_CONNECTIONS", "4KiB", "whole number"),
        ("S3GW_IDLE_TIMEOUT", "0", "at least 1s"),
        ("S3GW_BODY_IDLE_TIMEOUT", "0s", "at least 1s"),
        ("S3GW_SIGV2", "yes", "true or false"),
        ("S3GW_MAX_HEADER_BYTES", "8GiB", "too large (at most "),
    ] {
        let message = error_of(&ServeArgs::default(), &[(var, value)]);
        assert!(message.contains(var), "{var}={value}: {message}");
        assert!(message.contains(expected), "{var}={value}: {message}");
    }
    let env = [
        ("S3GW_MAX_SIGNED_CHUNK", "2MiB"),
        ("S3GW_CHUNK_BUFFER_BUDGET", "1MiB"),
    ];
    assert!(error_of(&ServeArgs::default(), &env).contains("chunk buffer budget"));
}
