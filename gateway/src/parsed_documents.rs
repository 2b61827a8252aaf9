//! Bucket documents as the gateway uses them (a policy, an ACL, a public
//! access block, CORS rules), parsed once per stored text rather than on
//! every request that consults them.
//!
//! An entry keeps the text it was parsed from, the very `Arc` storage's
//! document cache handed out, and is reused only while storage hands out
//! that same `Arc`: any write, which storage's cache turns into a new
//! text, is seen as soon as storage sees it, and a hit costs a pointer
//! comparison where a miss costs one parse. Holding the `Arc` also keeps
//! its address from being reused by another text.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use storage_client::{BucketDocument, Namespace};

/// Entries kept before the map is emptied: a bucket's documents are at
/// most tens of KiB, so this bounds the memory to a few tens of MiB, and
/// emptying costs each bucket one parse.
const CAPACITY: usize = 1024;

type Parsed = Arc<dyn Any + Send + Sync>;
/// Per bucket (in its namespace: two tenants may each have a bucket of one
/// name) and kind: the text last parsed and what it parsed to.
type Entries = HashMap<(Namespace, String, BucketDocument), (Arc<str>, Parsed)>;

#[derive(Default)]
pub struct ParsedDocuments {
    entries: Mutex<Entries>,
}

impl ParsedDocuments {
    /// `text` (the bucket's current document of `kind`) parsed by `parse`,
    /// from an earlier parse of this same text if there was one.
    pub fn get_or_parse<T, E>(
        &self,
        (namespace, bucket): (&Namespace, &str),
        kind: BucketDocument,
        text: Arc<str>,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Arc<T>, E>
    where
        T: Any + Send + Sync,
    {
        let key = (namespace.clone(), bucket.to_owned(), kind);
        let hit = self
            .lock()
            .get(&key)
            .filter(|(held, _)| Arc::ptr_eq(held, &text))
            .and_then(|(_, parsed)| Arc::clone(parsed).downcast::<T>().ok());
        if let Some(parsed) = hit {
            return Ok(parsed);
        }
        let parsed = Arc::new(parse(&text)?);
        let mut entries = self.lock();
        if entries.len() >= CAPACITY && !entries.contains_key(&key) {
            entries.clear();
        }
        entries.insert(key, (text, Arc::clone(&parsed) as Parsed));
        Ok(parsed)
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        // A panic elsewhere cannot leave the map half-written: each update
        // is one insert or clear.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARED: Namespace = Namespace::Shared;

    fn parse_counting(calls: &mut usize) -> impl FnOnce(&str) -> Result<usize, ()> + '_ {
        move |text| {
            *calls += 1;
            Ok(text.len())
        }
    }

    #[test]
    fn the_same_text_is_parsed_once_and_a_new_text_again() {
        let cache = ParsedDocuments::default();
        let kind = BucketDocument::Policy;
        let mut calls = 0;
        let text: Arc<str> = Arc::from("{}");
        for _ in 0..3 {
            let parsed = cache.get_or_parse(
                (&SHARED, "b"),
                kind,
                Arc::clone(&text),
                parse_counting(&mut calls),
            );
            assert_eq!(*parsed.unwrap(), 2);
        }
        assert_eq!(calls, 1);
        // Equal bytes in a new allocation: what storage hands out after a
        // write (or a reload), so it is parsed again.
        let reloaded: Arc<str> = Arc::from("{}");
        cache
            .get_or_parse((&SHARED, "b"), kind, reloaded, parse_counting(&mut calls))
            .unwrap();
        assert_eq!(calls, 2);
        cache
            .get_or_parse(
                (&SHARED, "other"),
                kind,
                Arc::clone(&text),
                parse_counting(&mut calls),
            )
            .unwrap();
        assert_eq!(calls, 3, "entries are per bucket");
        // A tenant's bucket of the same name is another bucket: its entry
        // survives the shared bucket's document changing.
        let tenant = Namespace::Tenant(Arc::from("tenant-a"));
        let (tenants, shared): (Arc<str>, Arc<str>) = (Arc::from("{}"), Arc::from("{}"));
        for (namespace, text) in [(&tenant, &tenants), (&SHARED, &shared), (&tenant, &tenants)] {
            cache
                .get_or_parse(
                    (namespace, "b"),
                    kind,
                    Arc::clone(text),
                    parse_counting(&mut calls),
                )
                .unwrap();
        }
        assert_eq!(calls, 5, "entries are per namespace");
    }

    #[test]
    fn a_failed_parse_is_not_kept_and_the_map_stays_bounded() {
        let cache = ParsedDocuments::default();
        let text: Arc<str> = Arc::from("bad");
        let failed: Result<Arc<usize>, &str> = cache.get_or_parse(
            (&SHARED, "b"),
            BucketDocument::Acl,
            Arc::clone(&text),
            |_| Err("bad"),
        );
        assert!(failed.is_err());
        let mut calls = 0;
        cache
            .get_or_parse(
                (&SHARED, "b"),
                BucketDocument::Acl,
                text,
                parse_counting(&mut calls),
            )
            .unwrap();
        assert_eq!(calls, 1);
        for i in 0..CAPACITY * 2 {
            cache
                .get_or_parse(
                    (&SHARED, &format!("b{i}")),
                    BucketDocument::Acl,
                    Arc::from("x"),
                    |t| Ok::<_, ()>(t.len()),
                )
                .unwrap();
        }
        assert!(cache.lock().len() <= CAPACITY);
    }
}
