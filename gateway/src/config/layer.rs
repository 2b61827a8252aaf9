//! Settings as given, by source: each one is first collected as text with
//! where it came from (`--listen`, `S3GW_LISTEN`, `listen in gateway.toml`),
//! so that an invalid value is reported in one line naming its source.
//! Later layers override earlier ones: file < environment < flags.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::ConfigError;
use super::settings::{
    DURATION_UNITS, Default, Kind, MAX_DURATION, SETTINGS, SIZE_UNITS, Setting, setting,
};
use crate::toml_error::toml_error;

/// A raw setting and where it came from, for error messages.
#[derive(Clone, Debug)]
pub(crate) struct Given {
    pub(crate) value: String,
    pub(crate) origin: String,
}

/// The settings one source provides, by TOML key.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layer(pub(crate) BTreeMap<&'static str, Given>);

impl Given {
    pub(crate) fn new(value: impl Into<String>, origin: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            origin: origin.into(),
        }
    }

    pub(crate) fn invalid(&self, why: &str) -> ConfigError {
        ConfigError(format!("{} = {:?}: {why}", self.origin, self.value))
    }
}

impl Layer {
    pub(crate) fn merge(&mut self, over: Layer) {
        self.0.extend(over.0);
    }

    /// The setting as given, if it was; `key` must be declared (a typo
    /// here would otherwise read as "never given").
    pub(crate) fn get(&self, key: &str) -> Option<&Given> {
        self.0.get(setting(key).key)
    }

    /// The setting as given, else its declared default (`None` when its
    /// default is the storage back end's or nothing).
    fn given_or_default(&self, key: &str) -> Option<Given> {
        match (self.get(key), setting(key).default) {
            (Some(given), _) => Some(given.clone()),
            (None, Default::Value(value)) => Some(Given::new(value, format!("{key}'s default"))),
            (None, Default::Storage { .. } | Default::Unset(_)) => None,
        }
    }

    /// A text setting, given or its default.
    pub(crate) fn text(&self, key: &str) -> Option<Given> {
        self.given_or_default(key)
    }

    /// A word setting its declared [`Word`](super::settings::Word) accepts.
    pub(crate) fn word(&self, key: &str) -> Result<Option<Given>, ConfigError> {
        let Kind::Word { word, expected, .. } = setting(key).kind else {
            panic!("{key} is not a word");
        };
        match self.given_or_default(key) {
            Some(given) if !word.accepts(&given.value) => {
                Err(given.invalid(&format!("expected {expected}")))
            }
            given => Ok(given),
        }
    }

    /// A choice setting: one of its declared values.
    pub(crate) fn choice(&self, key: &str) -> Result<Option<&'static str>, ConfigError> {
        let Kind::Choice { values, .. } = setting(key).kind else {
            panic!("{key} is not a choice");
        };
        let Some(given) = self.given_or_default(key) else {
            return Ok(None);
        };
        match values.iter().find(|v| **v == given.value) {
            Some(value) => Ok(Some(value)),
            None => Err(given.invalid(&format!("expected {}", values.join(" or ")))),
        }
    }

    /// A size setting within its declared bounds.
    pub(crate) fn size(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        let (max, off) = match setting(key).kind {
            Kind::Size { max } => (max, false),
            Kind::SizeOrOff { max } => (max, true),
            _ => panic!("{key} is not a size"),
        };
        let Some(given) = self.given_or_default(key) else {
            return Ok(None);
        };
        if off && given.value.trim() == "0" {
            return Ok(Some(0));
        }
        let size = parse_size(&given)?;
        if size > max {
            return Err(given.invalid(&format!("is too large (at most {})", size_text(max))));
        }
        Ok(Some(size))
    }

    /// A duration setting, at least its declared minimum.
    pub(crate) fn duration(&self, key: &str) -> Result<Option<Duration>, ConfigError> {
        let Kind::Duration { min } = setting(key).kind else {
            panic!("{key} is not a duration");
        };
        let Some(given) = self.given_or_default(key) else {
            return Ok(None);
        };
        let duration = parse_duration(&given)?;
        if duration < min {
            return Err(given.invalid(&format!("must be at least {}s", min.as_secs())));
        }
        Ok(Some(duration))
    }

    /// A count setting within its declared bounds.
    pub(crate) fn count(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        let Kind::Count { max } = setting(key).kind else {
            panic!("{key} is not a count");
        };
        let Some(given) = self.given_or_default(key) else {
            return Ok(None);
        };
        let count = parse_count(&given)?;
        if count > max {
            return Err(given.invalid(&format!("is too large (at most {max})")));
        }
        Ok(Some(count))
    }

    /// A `true`/`false` setting.
    pub(crate) fn flag(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        let Some(given) = self.given_or_default(key) else {
            return Ok(None);
        };
        match given.value.as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            _ => Err(given.invalid("expected true or false")),
        }
    }
}

/// The settings of a TOML file; unknown and duplicate keys are refused so
/// that typos do not pass silently.
pub(crate) fn file_layer(path: &Path) -> Result<Layer, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read config file {}: {e}", path.display())))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        ConfigError(format!(
            "config file {}: {}",
            path.display(),
            toml_error(&text, &e)
        ))
    })?;
    // Relative paths inside the file are relative to the file, as a reader expects.
    let base = path.parent().unwrap_or(Path::new(""));
    let mut layer = Layer::default();
    for (key, value) in table {
        let Some(declared) = SETTINGS.iter().find(|s| s.key == key) else {
            return Err(ConfigError(format!(
                "config file {}: unknown key {key:?}",
                path.display()
            )));
        };
        let origin = format!("{} in {}", declared.key, path.display());
        let value = file_value(declared, value, base)
            .map_err(|why| ConfigError(format!("{origin}: {why}")))?;
        layer.0.insert(declared.key, Given::new(value, origin));
    }
    Ok(layer)
}

/// A TOML value as the text the other layers give.
fn file_value(declared: &Setting, value: toml::Value, base: &Path) -> Result<String, String> {
    use toml::Value;
    match (declared.kind, value) {
        (Kind::Text(_) | Kind::Word { .. } | Kind::Choice { .. }, Value::String(text)) => Ok(text),
        (Kind::Path(_), Value::String(text)) => Ok(base.join(text).to_string_lossy().into()),
        (
            Kind::Size { .. } | Kind::SizeOrOff { .. } | Kind::Duration { .. } | Kind::Count { .. },
            Value::String(text),
        ) => Ok(text),
        (
            Kind::Size { .. } | Kind::SizeOrOff { .. } | Kind::Duration { .. } | Kind::Count { .. },
            Value::Integer(n),
        ) => Ok(n.to_string()),
        (
            Kind::Size { .. } | Kind::SizeOrOff { .. } | Kind::Duration { .. } | Kind::Count { .. },
            _,
        ) => Err("expected a number or a string".into()),
        (Kind::Flag, Value::Boolean(b)) => Ok(b.to_string()),
        (Kind::Flag, Value::String(text)) => Ok(text),
        (Kind::Flag, _) => Err("expected true or false".into()),
        (Kind::List(_), Value::String(text)) => Ok(text),
        (Kind::List(_), Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(text) => Ok(text),
                _ => Err("expected an array of strings".to_owned()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|items| items.join(",")),
        (Kind::List(_), _) => Err("expected a string or an array of strings".into()),
        (Kind::Text(_) | Kind::Word { .. } | Kind::Choice { .. } | Kind::Path(_), _) => {
            Err("expected a string".into())
        }
    }
}

pub(crate) fn env_layer(env: &impl Fn(&str) -> Option<String>) -> Layer {
    let settings = SETTINGS.iter().filter_map(|s| {
        let var = s.env();
        env(&var).map(|value| (s.key, Given::new(value, var)))
    });
    Layer(settings.collect())
}

/// Parses `4194304`, `64KiB`, `4MiB`, `1GiB` (also `K`, `M`, `G`, `KB`...; all binary).
pub(crate) fn parse_size(s: &Given) -> Result<u64, ConfigError> {
    let expected = "expected a size such as 4194304, 64KiB or 4MiB";
    let text = s.value.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let unit = unit.trim().to_ascii_lowercase();
    let Some(&(_, multiplier)) = SIZE_UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(s.invalid(expected));
    };
    let size = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| s.invalid(expected))?;
    if size == 0 {
        return Err(s.invalid("must be greater than zero"));
    }
    Ok(size)
}

/// A positive whole number (`4096`), no unit.
fn parse_count(s: &Given) -> Result<u64, ConfigError> {
    match s.value.trim().parse::<u64>() {
        Ok(0) => Err(s.invalid("must be greater than zero")),
        Ok(n) => Ok(n),
        Err(_) => Err(s.invalid("expected a whole number such as 4096")),
    }
}

/// Parses `90s`, `15m`, `2h`, `7d` or a plain number of seconds (`3600`).
pub(crate) fn parse_duration(s: &Given) -> Result<Duration, ConfigError> {
    let expected = "expected a duration such as 90s, 15m, 2h, 7d or a number of seconds";
    let text = s.value.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let Some(&(_, seconds_per_unit)) = DURATION_UNITS.iter().find(|(name, _)| *name == unit.trim())
    else {
        return Err(s.invalid(expected));
    };
    let seconds = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(seconds_per_unit))
        .ok_or_else(|| s.invalid(expected))?;
    let duration = Duration::from_secs(seconds);
    if duration > MAX_DURATION {
        return Err(s.invalid(&format!(
            "must be at most {}d",
            MAX_DURATION.as_secs() / (24 * 60 * 60)
        )));
    }
    Ok(duration)
}

/// `bytes` in the largest binary unit that divides it exactly (`2MiB`),
/// as a size setting is written.
fn size_text(bytes: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match units
        .iter()
        .find(|(_, unit)| bytes >= *unit && bytes.is_multiple_of(*unit))
    {
        Some((name, unit)) => format!("{}{name}", bytes / unit),
        None => bytes.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_too_large_names_the_limit() {
        assert_eq!(size_text(64 << 10), "64KiB");
        assert_eq!(size_text(1 << 20), "1MiB");
        assert_eq!(size_text(3 << 30), "3GiB");
        assert_eq!(size_text(1000), "1000");
    }

    #[test]
    fn every_declared_default_parses_within_its_bounds() {
        let defaults = Layer::default();
        for s in SETTINGS {
            match s.kind {
                Kind::Size { .. } | Kind::SizeOrOff { .. } => {
                    defaults.size(s.key).expect(s.key);
                }
                Kind::Duration { .. } => drop(defaults.duration(s.key).expect(s.key)),
                Kind::Count { .. } => drop(defaults.count(s.key).expect(s.key)),
                Kind::Flag => drop(defaults.flag(s.key).expect(s.key)),
                Kind::Word { .. } => drop(defaults.word(s.key).expect(s.key)),
                Kind::Choice { .. } => drop(defaults.choice(s.key).expect(s.key)),
                Kind::Text(_) | Kind::Path(_) | Kind::List(_) => {}
            }
        }
    }
}
