//! The database's statistics by name, as `Db.statistics()` returns them: the engine's one
//! list of named statistics (`DbStats::iter`), which the C API reads too, so that the two
//! bindings cannot drift apart.

use std::collections::BTreeMap;

use strata::DbStats;

/// Every statistic of `stats` that is a number, by name.
pub fn statistics(stats: &DbStats) -> BTreeMap<&'static str, u64> {
    stats.iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_statistic_is_in_the_dict() {
        let stats = DbStats::default();
        let dict = statistics(&stats);
        assert_eq!(dict.len(), stats.iter().count());
        for name in [
            "keys_written",
            "gets",
            "flushes",
            "estimated_keys",
            "last_sequence",
        ] {
            assert!(dict.contains_key(name), "{name}");
        }
    }
}
