//! Typed keys: each declared setting is also a constant such as
//! [`BLOCK_SIZE`](super::BLOCK_SIZE), whose type says what its value looks
//! like and whether a declared value stands in for an unset one. The
//! readers take these keys, so a misspelt setting, or a setting read as a
//! kind it is not, does not compile.

use std::ops::Deref;

use super::Setting;

/// A declared setting: `K` (from [`kind`](super::kind)) is what its value
/// looks like, with the bounds its reader checks; `D` is [`Defaulted`] or
/// [`NoDefault`].
#[derive(Clone, Copy, Debug)]
pub struct Key<K, D> {
    pub(super) setting: &'static Setting,
    pub kind: K,
    pub default: D,
}

/// The declared value an unset setting takes; its reader returns a value.
#[derive(Clone, Copy, Debug)]
pub struct Defaulted {
    pub value: &'static str,
}

/// No declared value: unset is the storage back end's default, or says
/// something of its own; its reader returns an `Option`.
#[derive(Clone, Copy, Debug)]
pub struct NoDefault;

impl<K, D> Key<K, D> {
    /// The declaration, for where a constant needs it (`Deref` is not `const`).
    pub const fn setting(&self) -> &'static Setting {
        self.setting
    }
}

impl<K, D> Deref for Key<K, D> {
    type Target = Setting;

    fn deref(&self) -> &Setting {
        self.setting
    }
}

/// Reads one setting's value: what [`Values::read`](super::Values::read)
/// asks of its source for each setting. The merged layers of one
/// invocation (`config::layer`) implement it for every kind with that
/// kind's reader, which checks the declared bounds and names the source of
/// a bad value; `Value` is what the reader returns (an `Option` for a
/// [`NoDefault`] key). It is a trait so that the declarations need not
/// know the layers.
pub(crate) trait Read<K, D> {
    type Value;

    fn read(&self, key: Key<K, D>) -> Result<Self::Value, crate::config::ConfigError>;
}

/// Declares the settings, each once. For every `NAME = Setting { key: name, .. }`
/// it makes:
///
/// - the entry of [`SETTINGS`](super::SETTINGS), in the order written
///   (flag, environment variable, TOML key, default, bounds, help and the
///   docs' table row all come from it);
/// - the constant `NAME`, a [`Key`] typed by its `kind` and `default`,
///   which the readers take;
/// - the field `name` of [`Values`](super::Values), the setting's value as
///   given or its default, typed by its kind (see `@value` below: a size
///   or count is a `u64`, a duration a `Duration`, a flag a `bool`, a path
///   a `PathBuf`, a list a `Vec<String>`, a choice a `&'static str`, other
///   text a `String`), and an `Option` of it when the default is not
///   `Default::Value` (unset then means the back end's default, or
///   nothing);
/// - the line of [`Values::read`](super::Values::read) that reads that
///   field with the kind's reader, in the order written.
///
/// The key is written as an identifier (`key: block_size`): it is both
/// the TOML key and the field's name. `kind` and `default` are matched as
/// tokens, not as expressions: the key's and the field's types are read
/// off them, which a parsed expression would hide.
macro_rules! declare {
    ($(
        $name:ident = Setting {
            key: $key:ident,
            kind: Kind::$kind:ident $(( $($kind_tuple:tt)* ))? $({ $($kind_fields:tt)* })?,
            default: $default:ident $(::$default_variant:ident)? $(( $($default_args:tt)* ))? $({ $($default_fields:tt)* })?,
            read_by: $read_by:expr,
            help: $help:literal,
            doc: $doc:literal $(,)?
        }
    ),* $(,)?) => {
        // A key points into SETTINGS, so that the two cannot disagree.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        enum Index {
            $($name,)*
        }

        pub const SETTINGS: &[Setting] = &[$(
            Setting {
                key: stringify!($key),
                kind: Kind::$kind $(( $($kind_tuple)* ))? $({ $($kind_fields)* })?,
                default: $default $(::$default_variant)? $(( $($default_args)* ))? $({ $($default_fields)* })?,
                read_by: $read_by,
                help: $help,
                doc: $doc,
            },
        )*];

        $(
            #[doc = concat!("The `", stringify!($key), "` setting.")]
            pub const $name: $crate::config::settings::Key<
                declare!(@kind_type $kind),
                declare!(@default_type $default $(::$default_variant)?),
            > = $crate::config::settings::Key {
                setting: &SETTINGS[Index::$name as usize],
                kind: declare!(@kind $kind $(( $($kind_tuple)* ))? $({ $($kind_fields)* })?),
                default: declare!(@default $default $(::$default_variant)? $(( $($default_args)* ))?),
            };
        )*

        /// Every setting's value, given or its default, checked against
        /// its declared bounds: one field per declaration, named by its
        /// key. What involves more than one setting (the back end, TLS,
        /// the limits) `Config` builds from these.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Values {
            $(
                #[doc = concat!("`", stringify!($key), "`: ", $help, ".")]
                pub $key: declare!(@value $kind, $default $(::$default_variant)?),
            )*
        }

        impl Values {
            /// Reads every setting from `from`, in the order declared;
            /// the first bad value is the error.
            pub(crate) fn read<R>(from: &R) -> Result<Self, $crate::config::ConfigError>
            where
                $(R: $crate::config::settings::Read<
                    declare!(@kind_type $kind),
                    declare!(@default_type $default $(::$default_variant)?),
                    Value = declare!(@value $kind, $default $(::$default_variant)?),
                >,)*
            {
                Ok(Self {
                    $($key: from.read($name)?,)*
                })
            }
        }
    };

    // Sizes with and without `0` for off have one reader.
    (@kind_type SizeOrOff) => { $crate::config::settings::kind::Size };
    (@kind_type $kind:ident) => { $crate::config::settings::kind::$kind };

    // What the reader checks; the placeholder `name` is --help's, in SETTINGS.
    (@kind Text($name:expr)) => { $crate::config::settings::kind::Text };
    (@kind Path($name:expr)) => { $crate::config::settings::kind::Path };
    (@kind List($name:expr)) => { $crate::config::settings::kind::List };
    (@kind Word { name: $name:expr, word: $word:expr, expected: $expected:expr $(,)? }) => {
        $crate::config::settings::kind::Word { word: $word, expected: $expected }
    };
    (@kind Choice { name: $name:expr, values: $values:expr $(,)? }) => {
        $crate::config::settings::kind::Choice { values: $values }
    };
    (@kind Size { max: $max:expr $(,)? }) => {
        $crate::config::settings::kind::Size { max: $max, off: false }
    };
    (@kind SizeOrOff { max: $max:expr $(,)? }) => {
        $crate::config::settings::kind::Size { max: $max, off: true }
    };
    (@kind Duration { min: $min:expr $(,)? }) => {
        $crate::config::settings::kind::Duration { min: $min }
    };
    (@kind Count { max: $max:expr $(,)? }) => {
        $crate::config::settings::kind::Count { max: $max }
    };
    (@kind Flag) => { $crate::config::settings::kind::Flag };

    (@default_type Default::Value) => { $crate::config::settings::Defaulted };
    (@default_type $($other:tt)*) => { $crate::config::settings::NoDefault };

    (@default Default::Value($value:literal)) => {
        $crate::config::settings::Defaulted { value: $value }
    };
    (@default $($other:tt)*) => { $crate::config::settings::NoDefault };

    // A field's type: its kind's value, optional unless a value is declared.
    (@value $kind:ident, Default::Value) => { declare!(@plain $kind) };
    (@value $kind:ident, $($other:tt)*) => { Option<declare!(@plain $kind)> };

    (@plain Text) => { String };
    (@plain Word) => { String };
    (@plain Choice) => { &'static str };
    (@plain Path) => { std::path::PathBuf };
    (@plain List) => { Vec<String> };
    (@plain Size) => { u64 };
    (@plain SizeOrOff) => { u64 };
    (@plain Duration) => { std::time::Duration };
    (@plain Count) => { u64 };
    (@plain Flag) => { bool };
}

pub(super) use declare;
