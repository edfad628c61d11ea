//! Stable sorting through one sort of positions.
//!
//! `slice::sort_by` is compiled anew for every element type and comparison it is given, about
//! 4 KB of wasm each time. The UI sorts a dozen kinds of rows (receipts, outbox rows, tasks,
//! transcript items, commands), a few dozen at a time: [`sort_by`] sorts their positions with
//! the standard library's stable sort, compiled once for all of them, then moves the rows into
//! that order.

use std::cmp::Ordering;

/// Sorts `items` by `cmp`, keeping the order of rows that compare equal (as `slice::sort_by`).
pub fn sort_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = positions(items.len(), &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    // `order` names each position once, so every row is taken exactly once.
    items.extend(order.into_iter().filter_map(|i| slots.get_mut(i).and_then(Option::take)));
}

/// Sorts `items` by the key `key` gives each (as `slice::sort_by_key`).
pub fn sort_by_key<T, K: Ord>(items: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// The positions `0..len` in the stable order `cmp` gives: the one instance of the sort.
fn positions(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_stable_sort_does_keeping_equal_rows_in_order() {
        // Pairs (key, arrival): many equal keys, so stability shows.
        let rows: Vec<(u8, usize)> = (0..500).map(|i| (((i * 7919) % 13) as u8, i)).collect();
        let mut ours = rows.clone();
        sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
        let mut std_sorted = rows.clone();
        std_sorted.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(ours, std_sorted);
        assert!(ours.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
    }

    #[test]
    fn sorts_by_key_and_moves_rows_that_are_not_copy() {
        let mut names = vec!["delta".to_string(), "alpha".to_string(), "charlie".to_string(), "bravo".to_string()];
        sort_by_key(&mut names, |s| s.clone());
        assert_eq!(names, ["alpha", "bravo", "charlie", "delta"]);
        let mut by_len = vec!["ccc".to_string(), "a".to_string(), "bb".to_string(), "d".to_string()];
        sort_by_key(&mut by_len, String::len);
        assert_eq!(by_len, ["a", "d", "bb", "ccc"]);
    }

    #[test]
    fn leaves_empty_and_single_lists_as_they_are() {
        let mut empty: Vec<String> = Vec::new();
        sort_by(&mut empty, |a, b| a.cmp(b));
        assert!(empty.is_empty());
        let mut one = vec![3];
        sort_by(&mut one, |a, b| b.cmp(a));
        assert_eq!(one, [3]);
    }
}
