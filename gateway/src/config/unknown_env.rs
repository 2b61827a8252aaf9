//! `S3GW_*` environment variables the gateway reads nothing from. A typo
//! (`S3GW_LISTNE`) would otherwise pass silently and leave the setting at
//! its default; each one is named in a warning at start, with the setting
//! it most likely meant.

use super::settings::SETTINGS;
use super::{ROOT_ACCESS_KEY_ENV, ROOT_SECRET_KEY_ENV};

const PREFIX: &str = "S3GW_";

/// Variables read besides the settings': the root key, and the endpoint
/// `admin` talks to.
const OTHERS: [&str; 3] = [ROOT_ACCESS_KEY_ENV, ROOT_SECRET_KEY_ENV, "S3GW_ENDPOINT"];

/// A suggestion is made only this close (edits): further off, the
/// variable is more likely another program's than a typo of ours.
const MAX_EDITS: usize = 3;

/// Each `S3GW_*` name in `names` that no setting reads, with the closest
/// variable that one does, if any is near.
pub fn unknown_vars(names: impl IntoIterator<Item = String>) -> Vec<(String, Option<String>)> {
    let known: Vec<String> = SETTINGS
        .iter()
        .map(|setting| setting.env())
        .chain(OTHERS.iter().map(|name| (*name).to_owned()))
        .collect();
    let mut unknown: Vec<(String, Option<String>)> = names
        .into_iter()
        .filter(|name| name.starts_with(PREFIX) && !known.contains(name))
        .map(|name| {
            let closest = known
                .iter()
                .map(|candidate| (edits(&name, candidate), candidate))
                .filter(|(distance, _)| *distance <= MAX_EDITS)
                .min()
                .map(|(_, candidate)| candidate.clone());
            (name, closest)
        })
        .collect();
    unknown.sort();
    unknown
}

/// Levenshtein distance between two ASCII-ish names, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn names_a_typo_and_the_setting_it_meant() {
        let found = unknown_vars(names(&[
            "S3GW_LISTNE",
            "S3GW_LISTEN",
            "PATH",
            "S3GW_ENDPOINT",
        ]));
        assert_eq!(
            found,
            [("S3GW_LISTNE".to_owned(), Some("S3GW_LISTEN".to_owned()))]
        );
    }

    #[test]
    fn far_off_names_get_no_suggestion() {
        let found = unknown_vars(names(&["S3GW_SOMETHING_ELSE_ENTIRELY"]));
        assert_eq!(found, [("S3GW_SOMETHING_ELSE_ENTIRELY".to_owned(), None)]);
    }

    #[test]
    fn every_setting_and_the_root_key_are_known() {
        let all: Vec<String> = SETTINGS
            .iter()
            .map(|setting| setting.env())
            .chain(OTHERS.iter().map(|name| (*name).to_owned()))
            .collect();
        assert!(unknown_vars(all).is_empty());
    }

    #[test]
    fn edit_distance() {
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("same", "same"), 0);
    }
}
