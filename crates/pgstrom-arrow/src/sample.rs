//! Which rows of an Arrow table ANALYZE samples: positions chosen
//! uniformly at random (Floyd's algorithm), as the heap AM's sample is.
//! Rows at evenly spread positions of a file sorted by a key that repeats
//! (TPC-H's `lineitem` by `l_orderkey`, four rows a key) never hold the
//! same key twice, and PostgreSQL then takes the key for unique.

/// `want` distinct row positions out of `total` (`want <= total`), chosen
/// uniformly at random, in ascending order: all of them where `want` is
/// `total`, else by Floyd's algorithm (`random(hi)`: uniform in 0..=hi).
pub fn positions(total: usize, want: usize, mut random: impl FnMut(usize) -> usize) -> Vec<usize> {
    if want >= total {
        return (0..total).collect();
    }
    let mut chosen = std::collections::HashSet::with_capacity(want);
    for j in total - want..total {
        let t = random(j);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    let mut v: Vec<usize> = chosen.into_iter().collect();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::positions;

    /// A small deterministic generator for the tests (xorshift).
    fn rng(seed: u64) -> impl FnMut(usize) -> usize {
        let mut x = seed;
        move |hi| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (hi as u64 + 1)) as usize
        }
    }

    #[test]
    fn all_rows_when_the_table_is_small() {
        assert_eq!(positions(5, 5, rng(1)), vec![0, 1, 2, 3, 4]);
        assert_eq!(positions(0, 0, rng(1)), Vec::<usize>::new());
    }

    #[test]
    fn distinct_sorted_in_range() {
        for seed in 1..50 {
            let v = positions(1000, 300, rng(seed));
            assert_eq!(v.len(), 300);
            assert!(v.windows(2).all(|w| w[0] < w[1]));
            assert!(v.iter().all(|&p| p < 1000));
        }
    }

    /// Rows sorted by a key of four rows each: a random sample holds some
    /// key twice (an evenly spread one never does, and the key would be
    /// taken for unique).
    #[test]
    fn a_sorted_repeating_key_shows_its_duplicates() {
        let v = positions(60_000_000, 30_000, rng(7));
        let keys: std::collections::HashSet<usize> = v.iter().map(|p| p / 4).collect();
        assert!(keys.len() < v.len(), "no key sampled twice");
    }
}
