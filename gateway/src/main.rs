//! The `s3-gateway` command: serve S3 (the default), manage keys and
//! buckets on a running server, or print the version, the settings, shell
//! completions or the man pages (both generated from this definition).
//!
//! Exit codes: 0 success, 1 runtime failure (including "no such key" for
//! `admin keys delete`, and an Ozone Manager that does not answer at start),
//! 2 invalid configuration or usage.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use s3_gateway::admin::bootstrap::{Instance, ROOT_CREDENTIALS_FILE, RootSource};
use s3_gateway::admin::check;
use s3_gateway::admin::client::{AdminClient, Trust};
use s3_gateway::config::{
    AdminConfig, AdminConfigArgs, Backend, Config, ROOT_ACCESS_KEY_ENV, ROOT_SECRET_KEY_ENV,
    ServeArgs, settings,
};
use s3_gateway::credentials_file::{self, KeyEntry};
use s3_gateway::logging;
use s3_gateway::server::signals::{Reload, Shutdown};
use s3_gateway::server::{self, Gateway};

#[derive(Parser)]
#[command(
    name = "s3-gateway",
    version = s3_gateway::VERSION,
    about = "An S3-compatible gateway over an Ozone-style object store",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Manage a running gateway over its admin API (root key required)
    Admin(AdminArgs),
    /// Print every setting: its flag, environment variable, TOML key, default and meaning
    Settings {
        /// One JSON object per line instead of the Markdown table
        #[arg(long)]
        json: bool,
    },
    /// Print the version
    Version,
    /// Print a shell completion script, e.g. `s3-gateway completions bash > /etc/bash_completion.d/s3-gateway`
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `s3-gateway man > /usr/local/share/man/man1/s3-gateway.1`
    Man {
        /// Write every page (s3-gateway.1 and one per subcommand, such as s3-gateway-admin-buckets.1) into DIR instead
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// The admin flags carry `admin_*` ids: clap shares one id namespace
/// between these flags, the server's flags and `keys delete ACCESS_KEY`.
#[derive(Args)]
struct AdminArgs {
    /// The server's configuration: `--config`, `--region`, `--data-dir`
    /// and their variables and TOML keys, read as the server reads them.
    #[command(flatten)]
    config: AdminConfigArgs,
    /// Gateway URL [env: S3GW_ENDPOINT] [default: the server's listen address, https with tls_cert]
    #[arg(
        long = "endpoint",
        id = "admin_endpoint",
        value_name = "URL",
        global = true
    )]
    endpoint: Option<String>,
    /// Root access key id [env: S3GW_ROOT_ACCESS_KEY] [default: the root key in DATA_DIR/root-credentials.toml]
    #[arg(
        long = "access-key",
        id = "admin_access_key",
        value_name = "ID",
        global = true
    )]
    access_key: Option<String>,
    /// Root secret key, with --access-key [env: S3GW_ROOT_SECRET_KEY]
    #[arg(
        long = "secret-key",
        id = "admin_secret_key",
        value_name = "SECRET",
        global = true
    )]
    secret_key: Option<String>,
    /// PEM file of CA certificates to trust for an HTTPS endpoint, besides the built-in roots [env: SSL_CERT_FILE]
    #[arg(
        long = "ca-cert",
        id = "admin_ca_cert",
        value_name = "FILE",
        global = true
    )]
    ca_cert: Option<PathBuf>,
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Access keys
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Buckets, whoever owns them
    Buckets {
        #[command(subcommand)]
        command: BucketsCommand,
    },
    /// Check the gateway end to end: create a scratch bucket, PUT, GET and
    /// DELETE an object in it, delete the bucket; exit 1 on any failure
    Check {
        /// Accept any TLS certificate (for an endpoint name the certificate does not carry)
        #[arg(long)]
        insecure: bool,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key; prints a [[keys]] block for a credentials file
    Create {
        /// The key's name, unique among the gateway's keys: 1 to 64 characters of A-Z, a-z, 0-9 and . _ @ -
        #[arg(long, value_name = "NAME")]
        name: String,
    },
    /// List keys (without secrets)
    List {
        /// One JSON object per key and line ({"name", "access_key", "is_root"}), for scripts
        #[arg(long)]
        json: bool,
    },
    /// Delete a key; exits 1 if there is no such key
    Delete {
        /// The access key id to delete, as `keys list` shows it
        #[arg(value_name = "ACCESS_KEY")]
        access_key: String,
    },
}

#[derive(Subcommand)]
enum BucketsCommand {
    /// List every bucket: its owner, and the objects and bytes it holds (reads each bucket's whole listing)
    List {
        /// One JSON object per bucket and line ({"name", "owner", "owner_name", "created", "objects", "bytes", "noncurrent_versions", "noncurrent_bytes"}), for scripts
        #[arg(long, id = "buckets_json")]
        json: bool,
    },
    /// Give a bucket to another key (a deleted key's buckets, say); its ACL becomes the new owner's private one
    SetOwner {
        #[arg(value_name = "BUCKET", id = "owned_bucket")]
        bucket: String,
        /// The access key id of the new owner, as `keys list` shows it
        #[arg(value_name = "ACCESS_KEY", id = "new_owner")]
        access_key: String,
    },
    /// Delete a bucket; exits 1 if it is not empty, unless --force
    Delete {
        #[arg(value_name = "BUCKET", id = "doomed_bucket")]
        bucket: String,
        /// Delete every object, version, delete marker and upload in it first
        #[arg(long)]
        force: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => serve(&cli.serve),
        Some(Command::Version) => {
            println!("s3-gateway {}", s3_gateway::VERSION);
            ExitCode::SUCCESS
        }
        Some(Command::Settings { json }) => {
            if json {
                print!("{}", settings::json_lines());
            } else {
                print!("{}", settings::markdown_table());
            }
            ExitCode::SUCCESS
        }
        Some(Command::Admin(args)) => admin(args),
        Some(Command::Completions { shell }) => {
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "s3-gateway", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Some(Command::Man { dir }) => {
            let written = match dir {
                Some(dir) => std::fs::create_dir_all(&dir)
                    .and_then(|()| clap_mangen::generate_to(Cli::command(), dir)),
                None => clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout()),
            };
            written.map_or_else(
                |e| {
                    eprintln!("s3-gateway: cannot write the man page: {e}");
                    ExitCode::FAILURE
                },
                |()| ExitCode::SUCCESS,
            )
        }
    }
}

fn serve(flags: &ServeArgs) -> ExitCode {
    let config = match Config::load(flags) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("s3-gateway: {e}");
            return ExitCode::from(2);
        }
    };
    logging::init(&config.settings.log_level, config.log_format);
    let names = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
    for (name, closest) in s3_gateway::config::unknown_vars(names) {
        match closest {
            Some(setting) => tracing::warn!(
                variable = %name,
                "ignored: no setting reads this environment variable; did you mean {setting}?"
            ),
            None => tracing::warn!(
                variable = %name,
                "ignored: no setting reads this environment variable"
            ),
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(server::WORKER_STACK_BYTES)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("s3-gateway: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        // Before anything slow: a SIGTERM while storage opens must stop the
        // start cleanly, not kill the process with the default action.
        let (shutdown, hangups) = match (Shutdown::install(), Reload::install()) {
            (Ok(shutdown), Ok(hangups)) => (shutdown, hangups),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("s3-gateway: cannot listen for signals: {e}");
                return ExitCode::FAILURE;
            }
        };
        let shutdown = shutdown.requested();
        tokio::pin!(shutdown);
        // A start from another directory makes a new store under a
        // relative data dir: the data line says so.
        let data_dir_existed = config.settings.data_dir.exists();
        let opened = tokio::select! {
            opened = Gateway::open(&config) => opened,
            () = &mut shutdown => {
                tracing::info!("stopped before serving");
                return ExitCode::SUCCESS;
            }
        };
        let gateway = match opened {
            Ok(gateway) => gateway,
            Err(e) => {
                eprintln!("s3-gateway: {e}");
                return if e.is_configuration() {
                    ExitCode::from(2)
                } else {
                    ExitCode::FAILURE
                };
            }
        };
        let endpoint = gateway.endpoint();
        let instance = Instance {
            endpoint: endpoint.clone(),
            region: config.settings.region.clone(),
            data_dir: (config.settings.data_dir != Path::new(settings::DATA_DIR.default.value))
                .then(|| config.settings.data_dir.clone()),
            root_source: root_source(&config),
        };
        let backend = match &config.backend {
            Backend::Embedded => format!("embedded in {}", config.settings.data_dir.display()),
            Backend::Ozone(ozone) => format!("ozone at {}", ozone.om.join(",")),
        };
        let data = match &config.backend {
            Backend::Embedded => {
                let dir = std::fs::canonicalize(&config.settings.data_dir)
                    .unwrap_or_else(|_| config.settings.data_dir.clone());
                let new = if data_dir_existed { "" } else { " (new: created by this start)" };
                format!("{}{new}", dir.display())
            }
            Backend::Ozone(ozone) => format!("Apache Ozone, OM {}", ozone.om.join(",")),
        };
        // Logged before the endpoint line, which tools wait for.
        let addresses: Vec<String> = gateway.local_addrs().iter().map(ToString::to_string).collect();
        tracing::info!(%endpoint, addresses = %addresses.join(","), %backend, region = %config.settings.region, "serving");
        println!("Data: {data}");
        print!("{}", gateway.root_keys().banner(&instance));
        println!("s3-gateway listening on {endpoint}");
        tokio::spawn(server::reload_on_hangup(hangups, gateway.certificates()));
        gateway.serve(shutdown).await;
        tracing::info!("stopped");
        ExitCode::SUCCESS
    })
}

/// Where `admin` on this machine finds a root key's secret: the one it
/// looks at first of those this server was configured with.
fn root_source(config: &Config) -> RootSource {
    match &config.settings.credentials {
        Some(file) if config.keys.iter().any(|key| key.root) => {
            RootSource::CredentialsFile(file.clone())
        }
        _ if config
            .settings
            .data_dir
            .join(ROOT_CREDENTIALS_FILE)
            .is_file() =>
        {
            RootSource::DataDir
        }
        _ if config.root_key.is_some() => RootSource::Environment,
        _ => RootSource::Unknown,
    }
}

fn admin(args: AdminArgs) -> ExitCode {
    let config = match AdminConfig::load(&args.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("s3-gateway: {e}");
            return ExitCode::from(2);
        }
    };
    let (access_key, secret_key) = match admin_credentials(&args, &config) {
        Ok(keys) => keys,
        Err(message) => {
            eprintln!("s3-gateway: {message}");
            return ExitCode::from(2);
        }
    };
    let endpoint = args
        .endpoint
        .clone()
        .or_else(|| std::env::var("S3GW_ENDPOINT").ok())
        .unwrap_or(config.endpoint);
    let trust = if matches!(args.command, AdminCommand::Check { insecure: true }) {
        Trust::AnyCertificate
    } else {
        match args
            .ca_cert
            .clone()
            .or_else(|| std::env::var_os("SSL_CERT_FILE").map(PathBuf::from))
        {
            Some(file) => Trust::AlsoCa(file),
            None => Trust::BuiltIn,
        }
    };
    let client = match AdminClient::new(&endpoint, &config.region, &access_key, &secret_key, &trust)
    {
        Ok(client) => client,
        Err(e) => {
            eprintln!("s3-gateway: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("s3-gateway: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let command = match args.command {
        AdminCommand::Keys { command } => command,
        AdminCommand::Buckets { command } => {
            return runtime.block_on(buckets(&client, command));
        }
        AdminCommand::Check { .. } => {
            return runtime.block_on(check::round_trip(&client)).map_or_else(
                |e| {
                    eprintln!("s3-gateway: check: {e}");
                    ExitCode::FAILURE
                },
                |()| ExitCode::SUCCESS,
            );
        }
    };
    runtime.block_on(async {
        let outcome = match command {
            KeysCommand::Create { name } => client.create_key(&name).await.map(|key| {
                print!(
                    "{}",
                    credentials_file::render(&KeyEntry {
                        name: key.name,
                        access_key: key.access_key,
                        secret_key: key.secret_key,
                        root: false,
                    })
                );
                ExitCode::SUCCESS
            }),
            KeysCommand::List { json: true } => client.list_keys().await.map(|keys| {
                for key in keys {
                    println!("{}", serde_json::to_string(&key).expect("a key serialises"));
                }
                ExitCode::SUCCESS
            }),
            KeysCommand::List { json: false } => client.list_keys().await.map(|keys| {
                let width = keys.iter().map(|k| k.name.len()).max().unwrap_or(0).max(4);
                println!("{:<width$}  {:<20}  ROOT", "NAME", "ACCESS_KEY");
                for key in keys {
                    let root = if key.is_root { "yes" } else { "no" };
                    println!("{:<width$}  {:<20}  {root}", key.name, key.access_key);
                }
                ExitCode::SUCCESS
            }),
            KeysCommand::Delete { access_key } => {
                client.delete_key(&access_key).await.map(|deleted| {
                    if deleted {
                        println!("deleted key {access_key}");
                        ExitCode::SUCCESS
                    } else {
                        eprintln!("s3-gateway: no key with access key id {access_key}");
                        ExitCode::FAILURE
                    }
                })
            }
        };
        outcome.unwrap_or_else(|e| {
            eprintln!("s3-gateway: {e}");
            ExitCode::FAILURE
        })
    })
}

/// Runs one `admin buckets` command.
async fn buckets(client: &AdminClient, command: BucketsCommand) -> ExitCode {
    let outcome = match command {
        BucketsCommand::List { json: true } => client.list_buckets().await.map(|buckets| {
            for bucket in buckets {
                let line = serde_json::to_string(&bucket).expect("a bucket serialises");
                println!("{line}");
            }
        }),
        BucketsCommand::List { json: false } => client.list_buckets().await.map(|buckets| {
            let width = buckets
                .iter()
                .map(|b| b.name.len())
                .max()
                .unwrap_or(0)
                .max(6);
            println!(
                "{:<width$}  {:<20}  {:<16}  {:>10}  {:>14}",
                "BUCKET", "OWNER", "OWNER_NAME", "OBJECTS", "BYTES"
            );
            for bucket in buckets {
                let owner_name = bucket.owner_name.as_deref().unwrap_or("(deleted)");
                println!(
                    "{:<width$}  {:<20}  {owner_name:<16}  {:>10}  {:>14}",
                    bucket.name, bucket.owner, bucket.objects, bucket.bytes
                );
            }
        }),
        BucketsCommand::SetOwner { bucket, access_key } => client
            .set_bucket_owner(&bucket, &access_key)
            .await
            .map(|summary| println!("bucket {} is owned by {}", summary.name, summary.owner)),
        BucketsCommand::Delete { bucket, force } => client
            .delete_bucket(&bucket, force)
            .await
            .map(|()| println!("deleted bucket {bucket}")),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("s3-gateway: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The root key from flags or environment, else a `root = true` key of the
/// server's credentials file, else the one a first start wrote into the
/// data dir, so `admin` works out of the box on the same machine.
fn admin_credentials(args: &AdminArgs, config: &AdminConfig) -> Result<(String, String), String> {
    let access_key = args
        .access_key
        .clone()
        .or_else(|| std::env::var(ROOT_ACCESS_KEY_ENV).ok());
    let secret_key = args
        .secret_key
        .clone()
        .or_else(|| std::env::var(ROOT_SECRET_KEY_ENV).ok());
    match (access_key, secret_key) {
        (Some(access_key), Some(secret_key)) => Ok((access_key, secret_key)),
        (None, None) => {
            if let Some(file) = &config.credentials {
                let keys = credentials_file::load(file).map_err(|e| e.to_string())?;
                if let Some(key) = keys.into_iter().find(|key| key.root) {
                    return Ok((key.access_key, key.secret_key));
                }
            }
            let file = config.data_dir.join(ROOT_CREDENTIALS_FILE);
            let keys = credentials_file::load(&file).map_err(|e| {
                format!(
                    "no root key: pass --access-key and --secret-key, set {ROOT_ACCESS_KEY_ENV} and {ROOT_SECRET_KEY_ENV}, point --credentials at a file with a `root = true` key, or point --data-dir at the gateway's data ({e})"
                )
            })?;
            keys.into_iter()
                .find(|key| key.root)
                .map(|key| (key.access_key, key.secret_key))
                .ok_or_else(|| format!("{} holds no root key", file.display()))
        }
        _ => Err("--access-key and --secret-key must be given together".to_string()),
    }
}
