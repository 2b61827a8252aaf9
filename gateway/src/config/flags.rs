//! Command-line flags made from [`SETTINGS`]: `serve` takes every setting,
//! `admin` the few it shares with the server (`--config`, `--region`,
//! `--data-dir`). Every flag is optional, so that an unset one falls back to
//! the environment, the file, then the default.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use super::layer::{Given, Layer};
use super::settings::{self, CONFIG_ENV, CONFIG_FLAG, Key, SETTINGS, Setting};

/// The settings `admin` reads like the server: where the configuration is,
/// the region to sign for, the data dir holding a generated root key, the
/// credentials file that may hold a root key.
pub const ADMIN_SETTINGS: [&Setting; 3] = [
    settings::REGION.setting(),
    settings::DATA_DIR.setting(),
    settings::CREDENTIALS.setting(),
];

/// Flags as given, by TOML key.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    pub config: Option<PathBuf>,
    given: BTreeMap<&'static str, Given>,
}

impl Flags {
    /// These flags with `key`'s flag and `value` added, as if given on the
    /// command line.
    pub fn with<K, D>(mut self, key: Key<K, D>, value: impl Into<String>) -> Self {
        self.given.insert(key.key, Given::new(value, key.flag()));
        self
    }

    pub(crate) fn layer(&self) -> Layer {
        Layer(self.given.clone())
    }

    fn augment(
        command: Command,
        settings: &[&'static Setting],
        id_prefix: &str,
        global: bool,
    ) -> Command {
        let config = Arg::new(format!("{id_prefix}{CONFIG_FLAG}"))
            .long(CONFIG_FLAG)
            .value_name("FILE")
            .global(global)
            .help(format!("TOML configuration file [env: {CONFIG_ENV}]"));
        settings.iter().fold(command.arg(config), |command, s| {
            command.arg(
                Arg::new(format!("{id_prefix}{}", s.key))
                    .long(s.key.replace('_', "-"))
                    .value_name(s.value_name())
                    .global(global)
                    .help(s.long_help()),
            )
        })
    }

    fn from_matches(matches: &ArgMatches, settings: &[&'static Setting], id_prefix: &str) -> Self {
        let value = |key: &str| {
            matches
                .get_one::<String>(&format!("{id_prefix}{key}"))
                .cloned()
        };
        Self {
            config: value(CONFIG_FLAG).map(PathBuf::from),
            given: settings
                .iter()
                .filter_map(|s| value(s.key).map(|v| (s.key, Given::new(v, s.flag()))))
                .collect(),
        }
    }
}

/// The `serve` flags: every setting.
#[derive(Clone, Debug, Default)]
pub struct ServeArgs(pub Flags);

impl ServeArgs {
    pub fn with<K, D>(self, key: Key<K, D>, value: impl Into<String>) -> Self {
        Self(self.0.with(key, value))
    }

    /// `--config FILE`.
    pub fn config(path: impl Into<PathBuf>) -> Self {
        Self(Flags {
            config: Some(path.into()),
            ..Flags::default()
        })
    }

    fn settings() -> Vec<&'static Setting> {
        SETTINGS.iter().collect()
    }
}

impl FromArgMatches for ServeArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(Flags::from_matches(matches, &Self::settings(), "")))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for ServeArgs {
    fn augment_args(command: Command) -> Command {
        Flags::augment(command, &Self::settings(), "", false)
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
