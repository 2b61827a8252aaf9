//! Settings as given, by source: each one is first collected as text with
//! where it came from (`--listen`, `S3GW_LISTEN`, `listen in gateway.toml`),
//! so that an invalid value is reported in one line naming its source.
//! Later layers override earlier ones: file < environment < flags.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::ConfigError;
use super::settings::{
    DURATION_UNITS, Defaulted, Key, Kind, MAX_DURATION, NoDefault, Read, SETTINGS, SIZE_UNITS,
    Setting, kind,
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

    /// The setting as given, if it was.
    pub(crate) fn get(&self, setting: &Setting) -> Option<&Given> {
        self.0.get(setting.key)
    }

    /// The setting as given, else its declared default.
    fn given_or_default<K, D: Fallback>(&self, key: Key<K, D>) -> D::Or<Given> {
        key.default.given_or(self.get(&key), key.key)
    }

    /// The setting as given or its default, read by `read`.
    fn read<K, D: Fallback, T>(
        &self,
        key: Key<K, D>,
        read: impl FnOnce(Given) -> Result<T, ConfigError>,
    ) -> Result<D::Or<T>, ConfigError> {
        D::try_map(self.given_or_default(key), read)
    }

    /// A text setting, given or its default.
    pub(crate) fn text<D: Fallback>(&self, key: Key<kind::Text, D>) -> D::Or<Given> {
        self.given_or_default(key)
    }

    /// A path setting, given or its default.
    pub(crate) fn path<D: Fallback>(&self, key: Key<kind::Path, D>) -> D::Or<Given> {
        self.given_or_default(key)
    }

    /// A list setting, given or its default.
    pub(crate) fn list<D: Fallback>(&self, key: Key<kind::List, D>) -> D::Or<Given> {
        self.given_or_default(key)
    }

    /// A word setting its declared [`Word`](crate::word::Word) accepts.
    pub(crate) fn word<D: Fallback>(
        &self,
        key: Key<kind::Word, D>,
    ) -> Result<D::Or<Given>, ConfigError> {
        let kind::Word { word, expected } = key.kind;
        self.read(key, |given| {
            if word.accepts(&given.value) {
                Ok(given)
            } else {
                Err(given.invalid(&format!("expected {expected}")))
            }
        })
    }

    /// A choice setting: one of its declared values.
    pub(crate) fn choice<D: Fallback>(
        &self,
        key: Key<kind::Choice, D>,
    ) -> Result<D::Or<&'static str>, ConfigError> {
        let kind::Choice { values } = key.kind;
        self.read(key, |given| {
            match values.iter().find(|v| **v == given.value) {
                Some(value) => Ok(*value),
                None => Err(given.invalid(&format!("expected {}", values.join(" or ")))),
            }
        })
    }

    /// A size setting within its declared bounds.
    pub(crate) fn size<D: Fallback>(
        &self,
        key: Key<kind::Size, D>,
    ) -> Result<D::Or<u64>, ConfigError> {
        let kind::Size { max, off } = key.kind;
        self.read(key, |given| {
            if off && given.value.trim() == "0" {
                return Ok(0);
            }
            let size = parse_size(&given)?;
            if size > max {
                return Err(given.invalid(&format!("is too large (at most {})", size_text(max))));
            }
            Ok(size)
        })
    }

    /// A duration setting, at least its declared minimum.
    pub(crate) fn duration<D: Fallback>(
        &self,
        key: Key<kind::Duration, D>,
    ) -> Result<D::Or<Duration>, ConfigError> {
        let kind::Duration { min } = key.kind;
        self.read(key, |given| {
            let duration = parse_duration(&given)?;
            if duration < min {
                return Err(given.invalid(&format!("must be at least {}s", min.as_secs())));
            }
            Ok(duration)
        })
    }

    /// A count setting within its declared bounds.
    pub(crate) fn count<D: Fallback>(
        &self,
        key: Key<kind::Count, D>,
    ) -> Result<D::Or<u64>, ConfigError> {
        let kind::Count { max } = key.kind;
        self.read(key, |given| {
            let count = parse_count(&given)?;
            if count > max {
                return Err(given.invalid(&format!("is too large (at most {max})")));
            }
            Ok(count)
        })
    }

    /// A `true`/`false` setting.
    pub(crate) fn flag<D: Fallback>(
        &self,
        key: Key<kind::Flag, D>,
    ) -> Result<D::Or<bool>, ConfigError> {
        self.read(key, |given| match given.value.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(given.invalid("expected true or false")),
        })
    }
}

/// The readers above as [`Read`], what `settings::Values::read` reads
/// every setting with: `Kind: Value = |layer, key| reader` for each kind,
/// text taken out of its [`Given`].
macro_rules! read_values {
    ($($kind:ident: $value:ty = |$layer:ident, $key:ident| $read:expr;)*) => {$(
        impl<D: Fallback> Read<kind::$kind, D> for Layer {
            type Value = D::Or<$value>;

            fn read(&self, $key: Key<kind::$kind, D>) -> Result<D::Or<$value>, ConfigError> {
                let $layer = self;
                $read
            }
        }
    )*};
}

read_values! {
    Text: String = |layer, key| D::try_map(layer.text(key), |given| Ok(given.value));
    Path: std::path::PathBuf = |layer, key| D::try_map(layer.path(key), |given| Ok(given.value.into()));
    List: Vec<String> = |layer, key| D::try_map(layer.list(key), |given| {
        Ok(given.value.split(',').map(|item| item.trim().to_owned()).collect())
    });
    Word: String = |layer, key| D::try_map(layer.word(key)?, |given| Ok(given.value));
    Choice: &'static str = |layer, key| layer.choice(key);
    Size: u64 = |layer, key| layer.size(key);
    Duration: Duration = |layer, key| layer.duration(key);
    Count: u64 = |layer, key| layer.count(key);
    Flag: bool = |layer, key| layer.flag(key);
}

/// What a reader returns: a setting with a declared default is its value,
/// one without is `None` when unset.
pub(crate) trait Fallback: Copy {
    type Or<T>;

    /// `given`, else the declared default of setting `key`.
    fn given_or(self, given: Option<&Given>, key: &str) -> Self::Or<Given>;

    fn try_map<T, U>(
        value: Self::Or<T>,
        f: impl FnOnce(T) -> Result<U, ConfigError>,
    ) -> Result<Self::Or<U>, ConfigError>;
}

impl Fallback for Defaulted {
    type Or<T> = T;

    fn given_or(self, given: Option<&Given>, key: &str) -> Given {
        given.map_or_else(
            || Given::new(self.value, format!("{key}'s default")),
            Given::clone,
        )
    }

    fn try_map<T, U>(
        value: T,
        f: impl FnOnce(T) -> Result<U, ConfigError>,
    ) -> Result<U, ConfigError> {
        f(value)
    }
}

impl Fallback for NoDefault {
    type Or<T> = Option<T>;

    fn given_or(self, given: Option<&Given>, _key: &str) -> Option<Given> {
        given.cloned()
    }

    fn try_map<T, U>(
        value: Option<T>,
        f: impl FnOnce(T) -> Result<U, ConfigError>,
    ) -> Result<Option<U>, ConfigError> {
        value.map(f).transpose()
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
}
