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

/// Declares the settings, each once: `NAME = Setting { .. }` is the entry
/// of [`SETTINGS`](super::SETTINGS), in the order written, and the
/// constant `NAME`, a [`Key`] typed by its `kind` and `default`.
///
/// `kind` and `default` are matched as tokens, not as expressions: the
/// key's type is read off them, which a parsed expression would hide.
macro_rules! declare {
    ($(
        $name:ident = Setting {
            key: $key:literal,
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
                key: $key,
                kind: Kind::$kind $(( $($kind_tuple)* ))? $({ $($kind_fields)* })?,
                default: $default $(::$default_variant)? $(( $($default_args)* ))? $({ $($default_fields)* })?,
                read_by: $read_by,
                help: $help,
                doc: $doc,
            },
        )*];

        $(
            #[doc = concat!("The `", $key, "` setting.")]
            pub const $name: $crate::config::settings::Key<
                declare!(@kind_type $kind),
                declare!(@default_type $default $(::$default_variant)?),
            > = $crate::config::settings::Key {
                setting: &SETTINGS[Index::$name as usize],
                kind: declare!(@kind $kind $(( $($kind_tuple)* ))? $({ $($kind_fields)* })?),
                default: declare!(@default $default $(::$default_variant)? $(( $($default_args)* ))?),
            };
        )*
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
}

pub(super) use declare;
