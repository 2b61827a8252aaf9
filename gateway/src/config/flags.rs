//! Command-line flags made from [`SETTINGS`]: `serve` takes every setting,
//! `admin` the few it shares with the server (`--config`, `--region`,
//! `--data-dir`). Every flag is optional, so that an unset one falls back to
//! the environment, the file, then the default.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use super::layer::{Given, Layer};
use super::settings::{CONFIG_ENV, CONFIG_FLAG, SETTINGS, setting};

/// The settings `admin` reads like the server: where the configuration is,
/// the region to sign for, the data dir holding a generated root key, the
/// credentials file that may hold a root key.
pub const ADMIN_SETTINGS: [&str; 3] = ["region", "data_dir", "credentials"];

/// Flags as given, by TOML key.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    pub config: Option<PathBuf>,
    given: BTreeMap<&'static str, String>,
}

impl Flags {
    /// These flags with `--key value` added, as if given on the command line.
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.given.insert(setting(key).key, value.into());
        self
    }

    pub(crate) fn layer(&self) -> Layer {
        let settings = self
            .given
            .iter()
            .map(|(&key, value)| (key, Given::new(value.clone(), setting(key).flag())));
        Layer(settings.collect())
    }

    fn augment(command: Command, keys: &[&'static str], id_prefix: &str, global: bool) -> Command {
        let config = Arg::new(format!("{id_prefix}{CONFIG_FLAG}"))
            .long(CONFIG_FLAG)
            .value_name("FILE")
            .global(global)
            .help(format!("TOML configuration file [env: {CONFIG_ENV}]"));
        keys.iter().fold(command.arg(config), |command, &key| {
            let s = setting(key);
            command.arg(
                Arg::new(format!("{id_prefix}{key}"))
                    .long(key.replace('_', "-"))
                    .value_name(s.value_name())
                    .global(global)
                    .help(s.long_help()),
            )
        })
    }

    fn from_matches(matches: &ArgMatches, keys: &[&'static str], id_prefix: &str) -> Self {
        let value = |key: &str| {
            matches
                .get_one::<String>(&format!("{id_prefix}{key}"))
                .cloned()
        };
        Self {
            config: value(CONFIG_FLAG).map(PathBuf::from),
            given: keys
                .iter()
                .filter_map(|&key| value(key).map(|v| (key, v)))
                .collect(),
        }
    }
}

/// The `serve` flags: every setting.
#[derive(Clone, Debug, Default)]
pub struct ServeArgs(pub Flags);

impl ServeArgs {
    pub fn with(self, key: &str, value: impl Into<String>) -> Self {
        Self(self.0.with(key, value))
    }

    /// `--config FILE`.
    pub fn config(path: impl Into<PathBuf>) -> Self {
        Self(Flags {
            config: Some(path.into()),
            ..Flags::default()
        })
    }

    fn keys() -> Vec<&'static str> {
        SETTINGS.iter().map(|s| s.key).collect()
    }
}

impl FromArgMatches for ServeArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(Flags::from_matches(matches, &Self::keys(), "")))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for ServeArgs {
    fn augment_args(command: Command) -> Command {
        Flags::augment(command, &Self::keys(), "", false)
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

/// The flags `admin` shares with the server; their ids carry `admin_`,
/// since clap shares one id namespace between them, the server's flags and
/// the subcommands' arguments.
#[derive(Clone, Debug, Default)]
pub struct AdminConfigArgs(pub Flags);

const ADMIN_ID: &str = "admin_";

impl FromArgMatches for AdminConfigArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(Flags::from_matches(
            matches,
            &ADMIN_SETTINGS,
            ADMIN_ID,
        )))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for AdminConfigArgs {
    fn augment_args(command: Command) -> Command {
        Flags::augment(command, &ADMIN_SETTINGS, ADMIN_ID, true)
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}
