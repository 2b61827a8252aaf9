//! The kinds a [`Key`](super::Key) is typed by: one for each reader, with
//! the bounds that reader checks, taken from the setting's [`Kind`](super::Kind)
//! where it is declared.

/// Text the gateway checks with code of its own.
#[derive(Clone, Copy, Debug)]
pub struct Text;

/// A file or directory.
#[derive(Clone, Copy, Debug)]
pub struct Path;

/// Comma-separated text.
#[derive(Clone, Copy, Debug)]
pub struct List;

/// Text that `word` accepts; `expected` says what is, when it does not.
#[derive(Clone, Copy, Debug)]
pub struct Word {
    pub word: crate::word::Word,
    pub expected: &'static str,
}

/// One of `values`.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    pub values: &'static [&'static str],
}

/// A size greater than zero, at most `max`; or `0` where `off` says it
/// turns something off.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub max: u64,
    pub off: bool,
}

/// A duration of at least `min`.
#[derive(Clone, Copy, Debug)]
pub struct Duration {
    pub min: std::time::Duration,
}

/// A whole number greater than zero, at most `max`.
#[derive(Clone, Copy, Debug)]
pub struct Count {
    pub max: u64,
}

/// `true` or `false`.
#[derive(Clone, Copy, Debug)]
pub struct Flag;
