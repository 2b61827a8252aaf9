//! Logging to stderr through `tracing`: the filter from `log_level` and
//! the line format from `log_format`.
//!
//! A bare level (`debug`) applies to the gateway's own crates only; the
//! crates it depends on (hyper, h2, rustls, tonic...) stay at `warn` unless
//! the filter names them (`debug,h2=trace`). Otherwise `debug` would add a
//! line per HTTP/2 frame and TLS handshake step to the one per request.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

use crate::config::LogFormat;
use crate::config::settings::LOG_LEVEL;

/// The crates whose events a bare level applies to.
const OWN_CRATES: [&str; 2] = ["s3_gateway", "storage_client"];

/// What the other crates log at when the filter does not name them.
const DEPENDENCY_LEVEL: LevelFilter = LevelFilter::WARN;

/// `log_level` with each bare level narrowed to the gateway's own crates.
pub fn directives(log_level: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for directive in log_level.split(',').map(str::trim) {
        match directive.parse::<LevelFilter>() {
            // A level at or below warn needs no narrowing.
            Ok(level) if level > DEPENDENCY_LEVEL => {
                out.push(DEPENDENCY_LEVEL.to_string());
                out.extend(OWN_CRATES.iter().map(|krate| format!("{krate}={level}")));
            }
            _ if directive.is_empty() => {}
            _ => out.push(directive.to_owned()),
        }
    }
    out.join(",")
}

/// The levels a bare directive may name, as the refusal lists them.
const LEVELS: &str = "off, error, warn, info, debug or trace";

/// Checks `log_level` at start. `tracing` reads a bare word that is not a
/// level (`warning`, `verbose`) as a target name, which turns every other
/// event off: a typo would silence the gateway, errors included. So a bare
/// directive must be a level; anything else names its target
/// (`TARGET=LEVEL`, `TARGET[span]=LEVEL`) and must parse as a `tracing`
/// filter directive.
pub fn check(log_level: &str) -> Result<(), String> {
    let given: Vec<&str> = log_level
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    if given.is_empty() {
        return Err(format!(
            "expected a level ({LEVELS}) or tracing filter directives such as s3_gateway=debug"
        ));
    }
    for directive in given {
        let names_a_target = directive.contains('=') || directive.contains('[');
        if !names_a_target && directive.parse::<LevelFilter>().is_err() {
            return Err(format!(
                "{directive:?} is not a level: expected {LEVELS}, or TARGET=LEVEL such as s3_gateway=debug"
            ));
        }
    }
    EnvFilter::try_new(directives(log_level))
        .map(drop)
        .map_err(|e| format!("{e}: levels are {LEVELS}"))
}

/// Installs the global subscriber; call once, before anything logs.
pub fn init(log_level: &str, format: LogFormat) {
    let filter = EnvFilter::try_new(directives(log_level))
        .unwrap_or_else(|_| EnvFilter::new(directives(LOG_LEVEL.default.value)));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        // Colour codes are noise in log files and collectors.
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().with_current_span(false).init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_level_applies_to_the_gateway_only() {
        assert_eq!(
            directives("debug"),
            "warn,s3_gateway=debug,storage_client=debug"
        );
        assert_eq!(
            directives("info,h2=trace"),
            "warn,s3_gateway=info,storage_client=info,h2=trace"
        );
    }

    #[test]
    fn a_word_that_is_no_level_is_refused_not_read_as_a_target() {
        for bad in [
            "warning",
            "verbose",
            "inf",
            "",
            " , ",
            "info,verbose",
            "s3_gateway=verbose",
            "s3_gateway=warning",
        ] {
            let refused = check(bad).expect_err(bad);
            assert!(
                refused.contains("off, error, warn, info, debug or trace"),
                "{bad:?}: {refused}"
            );
        }
        for good in [
            "error",
            "warn",
            "INFO",
            "debug",
            "trace",
            "off",
            "s3_gateway=debug",
            "s3_gateway=debug,info",
            "info,h2=trace",
            "s3_gateway::access=off,debug",
            "s3_gateway[request]=trace",
        ] {
            assert_eq!(check(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn quieter_levels_and_named_targets_are_kept() {
        assert_eq!(directives("error"), "error");
        assert_eq!(directives("off"), "off");
        assert_eq!(directives("s3_gateway=debug"), "s3_gateway=debug");
        assert!(EnvFilter::try_new(directives("debug,hyper=info")).is_ok());
    }
}
