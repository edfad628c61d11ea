//! `SortedMap` and `SortedSet`: ordered maps kept as one sorted `Vec`.
//!
//! Why not `BTreeMap`: every key/value pair of types instantiates the whole B-tree (node
//! splitting, merging, stealing, cursors), and the UI had nine such instantiations, about 64 KB
//! of wasm. The maps here hold a handful to a few hundred entries (drafts, streams, tombstones),
//! where a binary search over a vector is as fast and its code is a fraction of the size.
//! Iteration is in key order and the JSON form is an object, exactly as with `BTreeMap`, so the
//! wire and the stored rows are unchanged.

use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An ordered map over a sorted vector of `(key, value)` pairs.
#[derive(Clone, PartialEq, Eq)]
pub struct SortedMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        Self { entries: Vec::new() }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SortedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(k, v)| (k, v))).finish()
    }
}

impl<K, V> SortedMap<K, V> {
    pub const fn new() -> Self {
        Self { entries: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> + ExactSizeIterator {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// Keeps the entries for which `keep` says yes, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// Inserts or replaces; returns the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// The value for `key`, inserted from `make` first if absent (`BTreeMap::entry().or_insert_with`).
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// The value for `key`, inserted as `V::default()` first if absent.
    pub fn get_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        self.get_or_insert_with(key, V::default)
    }
}

impl<K: Ord, Q: Ord + ?Sized, V> std::ops::Index<&Q> for SortedMap<K, V>
where
    K: Borrow<Q>,
{
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("key present in SortedMap")
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    /// Later pairs win over earlier ones with the same key, as with `BTreeMap`.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = Self::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Serialize, V: Serialize> Serialize for SortedMap<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Deserialize<'de> for SortedMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Visitor<'de> for MapVisitor<K, V> {
            type Value = SortedMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = SortedMap::new();
                while let Some((k, v)) = access.next_entry()? {
                    map.insert(k, v);
                }
                Ok(map)
            }
        }
        d.deserialize_map(MapVisitor(PhantomData))
    }
}

/// An ordered set over a sorted vector.
#[derive(Clone, PartialEq, Eq)]
pub struct SortedSet<K> {
    map: SortedMap<K, ()>,
}

impl<K> Default for SortedSet<K> {
    fn default() -> Self {
        Self { map: SortedMap::new() }
    }
}

impl<K: fmt::Debug> fmt::Debug for SortedSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.map.keys()).finish()
    }
}

impl<K> SortedSet<K> {
    pub const fn new() -> Self {
        Self { map: SortedMap::new() }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.map.keys()
    }
}

impl<K: Ord> SortedSet<K> {
    /// Adds `key`; says whether it was new.
    pub fn insert(&mut self, key: K) -> bool {
        self.map.insert(key, ()).is_none()
    }

    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// Removes `key`; says whether it was there.
    pub fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.remove(key).is_some()
    }
}

impl<K: Ord> FromIterator<K> for SortedSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        Self { map: iter.into_iter().map(|k| (k, ())).collect() }
    }
}

impl<K: Serialize> Serialize for SortedSet<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.map.keys())
    }
}

impl<'de, K: Deserialize<'de> + Ord> Deserialize<'de> for SortedSet<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SetVisitor<K>(PhantomData<K>);
        impl<'de, K: Deserialize<'de> + Ord> Visitor<'de> for SetVisitor<K> {
            type Value = SortedSet<K>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut set = SortedSet::new();
                while let Some(k) = access.next_element()? {
                    set.insert(k);
                }
                Ok(set)
            }
        }
        d.deserialize_seq(SetVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u16),
        Remove(u8),
        Default(u8),
        Retain(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<u8>(), any::<u16>()).prop_map(|(k, v)| Op::Insert(k % 32, v)),
            any::<u8>().prop_map(|k| Op::Remove(k % 32)),
            any::<u8>().prop_map(|k| Op::Default(k % 32)),
            any::<u8>().prop_map(|m| Op::Retain(m % 5 + 2)),
        ]
    }

    proptest! {
        /// Every operation gives the same answers and leaves the same ordered contents as `BTreeMap`.
        #[test]
        fn sorted_map_behaves_like_btreemap(ops in proptest::collection::vec(op(), 0..200)) {
            let mut ours = SortedMap::<u8, u16>::new();
            let mut theirs = BTreeMap::<u8, u16>::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(ours.insert(k, v), theirs.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(ours.remove(&k), theirs.remove(&k)),
                    Op::Default(k) => {
                        *ours.get_or_default(k) += 1;
                        *theirs.entry(k).or_default() += 1;
                    }
                    Op::Retain(m) => {
                        ours.retain(|k, _| *k as u16 % m as u16 != 0);
                        theirs.retain(|k, _| *k as u16 % m as u16 != 0);
                    }
                }
                prop_assert_eq!(ours.len(), theirs.len());
                prop_assert!(ours.iter().eq(theirs.iter()));
                for k in 0..32u8 {
                    prop_assert_eq!(ours.get(&k), theirs.get(&k));
                    prop_assert_eq!(ours.contains_key(&k), theirs.contains_key(&k));
                }
            }
        }

        #[test]
        fn sorted_set_behaves_like_btreeset(keys in proptest::collection::vec((any::<bool>(), 0u8..32), 0..200)) {
            let mut ours = SortedSet::new();
            let mut theirs = BTreeSet::new();
            for (add, k) in keys {
                if add { prop_assert_eq!(ours.insert(k), theirs.insert(k)); }
                else { prop_assert_eq!(ours.remove(&k), theirs.remove(&k)); }
                prop_assert!(ours.iter().eq(theirs.iter()));
            }
        }
    }

    #[test]
    fn json_form_is_the_same_object_as_btreemap_and_later_duplicates_win() {
        let ours: SortedMap<String, Vec<String>> = [("b".to_string(), vec!["2".to_string()]), ("a".to_string(), vec!["1".to_string()])].into_iter().collect();
        let theirs: BTreeMap<String, Vec<String>> = ours.clone().into_iter().collect();
        assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
        assert_eq!(serde_json::to_string(&ours).unwrap(), r#"{"a":["1"],"b":["2"]}"#);
        let back: SortedMap<String, u8> = serde_json::from_str(r#"{"z":1,"a":2,"z":3}"#).unwrap();
        assert_eq!(back.iter().collect::<Vec<_>>(), vec![(&"a".to_string(), &2), (&"z".to_string(), &3)]);
        assert!(serde_json::from_str::<SortedMap<String, u8>>("[1]").unwrap_err().to_string().contains("a map"));
        let set: SortedSet<String> = serde_json::from_str(r#"["b","a","b"]"#).unwrap();
        assert_eq!(serde_json::to_string(&set).unwrap(), r#"["a","b"]"#);
    }
}
