//! In-memory cache of cacheable results (spec: server/utilities/caching.mdx;
//! which methods are cacheable is in the method table,
//! [`crate::protocol::methods::Method::is_cacheable`]): fresh for `ttlMs`
//! after receipt, keyed by method and the parameters that affect the
//! result, never holding results of MRTR retries.

use crate::protocol::methods;
use crate::rpc::lock_unpoisoned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How one call uses the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// Serve a fresh cached result; otherwise fetch and cache.
    #[default]
    Use,
    /// Always fetch, and replace the cached result.
    Refresh,
    /// Always fetch; neither read nor write the cache.
    Bypass,
}

struct Entry {
    value: Value,
    expires: Instant,
}

#[derive(Default)]
pub(crate) struct ResultCache {
    entries: Mutex<HashMap<String, Entry>>,
}

/// The cache key: method plus the params that affect the result (not
/// `_meta`, which carries per-request protocol fields).
pub(crate) fn cache_key(method: &str, params: &Map<String, Value>) -> String {
    /// The params without `_meta`, serialised without copying them first.
    struct Salient<'a>(&'a Map<String, Value>);
    impl serde::Serialize for Salient<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.0.iter().filter(|(name, _)| *name != "_meta"))
        }
    }
    let mut key = Vec::with_capacity(method.len() + 64);
    key.extend_from_slice(method.as_bytes());
    key.push(b'\n');
    // serde_json maps are sorted by key, so this text is canonical. Writing
    // JSON text to a Vec cannot fail, and the text is UTF-8.
    let _ = serde_json::to_writer(&mut key, &Salient(params));
    String::from_utf8(key).unwrap_or_default()
}

impl ResultCache {
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        let mut entries = lock_unpoisoned(&self.entries);
        match entries.get(key) {
            Some(e) if e.expires > Instant::now() => Some(e.value.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores a result for its `ttlMs` (nothing for 0, absent or negative,
    /// which mean "immediately stale").
    pub(crate) fn put(&self, key: String, result: &Value) {
        let ttl = result.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
        if ttl == 0
            || result
                .get("resultType")
                .and_then(Value::as_str)
                .is_some_and(|t| t != "complete")
        {
            return;
        }
        lock_unpoisoned(&self.entries).insert(
            key,
            Entry {
                value: result.clone(),
                expires: Instant::now() + Duration::from_millis(ttl),
            },
        );
    }

    /// Forgets every cached result of `method` (e.g. on list_changed).
    pub(crate) fn invalidate_method(&self, method: &str) {
        let prefix = format!("{method}\n");
        lock_unpoisoned(&self.entries).retain(|k, _| !k.starts_with(&prefix));
    }

    /// Forgets cached reads of one resource.
    pub(crate) fn invalidate_resource(&self, uri: &str) {
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let key = cache_key(methods::RESOURCES_READ, &params);
        lock_unpoisoned(&self.entries).remove(&key);
    }

    /// Forgets everything.
    pub(crate) fn clear(&self) {
        lock_unpoisoned(&self.entries).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::methods::TOOLS_LIST;
    use serde_json::json;

    #[test]
    fn honours_ttl_and_invalidation() {
        let cache = ResultCache::default();
        let key = cache_key(TOOLS_LIST, &Map::new());
        cache.put(
            key.clone(),
            &json!({"resultType": "complete", "ttlMs": 60000, "tools": []}),
        );
        assert!(cache.get(&key).is_some());
        cache.invalidate_method(TOOLS_LIST);
        assert!(cache.get(&key).is_none());
        cache.put(
            key.clone(),
            &json!({"resultType": "complete", "ttlMs": 0, "tools": []}),
        );
        assert!(cache.get(&key).is_none(), "ttl 0 is immediately stale");
    }

    #[test]
    fn key_ignores_meta_but_not_cursor() {
        let a = cache_key(TOOLS_LIST, json!({"_meta": {"x": 1}}).as_object().unwrap());
        let b = cache_key(TOOLS_LIST, json!({"_meta": {"x": 2}}).as_object().unwrap());
        let c = cache_key(TOOLS_LIST, json!({"cursor": "abc"}).as_object().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
