//! Table properties: what a table holds, recorded in its properties block.
//!
//! The block is an ordinary block (restart interval 1) of `name -> value` entries in name
//! order; numbers are varint64, the compression is its name. Unknown names are ignored, so
//! properties can be added without a format change.
//!
//! `strata.prefix-extractor` (a string, written only when the table has one) names the prefix
//! extractor whose prefixes the table's filter holds. A table without it (every table written
//! before prefix filters existed, and every table of a family without an extractor) has a
//! filter of whole keys only.
//!
//! `strata.column-family` (the family's name), `strata.column-family-id` (varint64) and,
//! for a TTL family, `strata.column-family-ttl` (varint64, seconds) record the column family
//! a database table was written for; a table without them (written by an older build, or
//! outside a database) names no family. Repair reads them to rebuild the families.
//!
//! A table with a partitioned index or filter (`partitioned.rs`) records
//! `strata.index-partitions` and `strata.top-level-index-bytes`, and with a partitioned
//! filter `strata.filter-partitions` and `strata.top-level-filter-bytes` (varint64 each,
//! written only when not 0): the reader learns from `strata.index-partitions` that the
//! footer's index is a top-level index. `strata.index-bytes` and `strata.filter-bytes` then
//! count the partitions and the top-level block together.
//!
//! A table written with data-block hash indexes records `strata.data-block-hash-indexes`
//! (varint64, written only when not 0): how many of its data blocks carry one.
//!
//! A table whose index block holds user keys instead of internal keys records
//! `strata.index-key-is-user-key` = 1 (varint64, written only when not 0; see
//! `builder.rs`).
//!
//! User properties (`collector.rs`) are entries under their own names, which never begin
//! with `strata.`; a table without any has the block it had before they existed, and a
//! reader that predates them skips them as unknown names.
//!
//! `strata.log-number` (varint64, written only when not 0) is the family's log number as of
//! the table: every record of its family in a WAL numbered below it is in this table or in
//! one written before it. A flush records the WAL of the memtable after the one it wrote, a
//! compaction the largest of its inputs'. Repair reads it to know which WAL records are
//! already in tables: sequence numbers cannot tell once the bottom of the tree has written
//! them as 0.

use std::collections::BTreeMap;

use crate::codec::{get_varint64, put_varint64};
use crate::table::block::{Block, BlockBuilder, BlockIter};
use crate::table::TableFamily;

/// Counts and sizes of one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableProperties {
    /// Entries (all kinds).
    pub entries: u64,
    /// Deletions and single-deletions.
    pub deletions: u64,
    /// Bytes of keys as given (before prefix sharing).
    pub raw_key_bytes: u64,
    /// Bytes of values as given (before compression).
    pub raw_value_bytes: u64,
    /// Smallest sequence number of an entry or range deletion.
    pub smallest_seq: u64,
    /// Largest sequence number of an entry or range deletion.
    pub largest_seq: u64,
    /// Compression of the data blocks (name).
    pub compression: String,
    /// Seconds since the Unix epoch when the table was written.
    pub creation_time: u64,
    /// Data blocks.
    pub data_blocks: u64,
    /// Bytes of data blocks as stored.
    pub data_bytes: u64,
    /// Bytes of the index block.
    pub index_bytes: u64,
    /// Bytes of the filter block (0 without a filter).
    pub filter_bytes: u64,
    /// Entries of the range-deletion block (tombstones as stored: repeats removed, not
    /// fragmented); 0 in tables written before range deletions existed. Not in `entries`.
    pub range_deletions: u64,
    /// The name of the prefix extractor whose prefixes the filter holds; empty without one.
    pub prefix_extractor: String,
    /// The name of the user key order (`strata.comparator`); empty in tables written before
    /// it was recorded, which are all bytewise.
    pub comparator: String,
    /// The column family the table was written for (`strata.column-family*`); `None` in
    /// tables that record none.
    pub column_family: Option<TableFamily>,
    /// Index partitions under a top-level index; 0 for a table with one index block.
    pub index_partitions: u64,
    /// Bytes of the top-level index block (0 without index partitions).
    pub top_level_index_bytes: u64,
    /// Filter partitions under a top-level filter index; 0 for a whole-table filter or none.
    pub filter_partitions: u64,
    /// Bytes of the top-level filter index block (0 without filter partitions).
    pub top_level_filter_bytes: u64,
    /// Data blocks carrying a hash index (`data_block_hash.rs`); 0 in tables written
    /// without them.
    pub data_block_hash_indexes: u64,
    /// 1 when the index block's keys are user keys (no user key's versions span two data
    /// blocks), 0 when they are internal keys.
    pub index_key_is_user_key: u64,
    /// The family's log number as of the table (`strata.log-number`); 0 when not recorded.
    pub log_number: u64,
    /// The properties of the user's collectors (`collector.rs`): every entry of the block
    /// whose name does not begin with `strata.`. Empty in tables written without collectors.
    pub user_properties: BTreeMap<String, Vec<u8>>,
}

/// The property naming the prefix extractor.
const PREFIX_EXTRACTOR: &str = "strata.prefix-extractor";
/// The properties recording the column family: its name, id and ttl (seconds).
const FAMILY_NAME: &str = "strata.column-family";
const FAMILY_ID: &str = "strata.column-family-id";
const FAMILY_TTL: &str = "strata.column-family-ttl";

/// The numbers of partitioned tables and of tables with data-block hash indexes, written
/// only when not 0, so that other tables keep the properties block they had before these
/// existed.
const OPTIONAL_NUMBERS: [&str; 7] = [
    "strata.data-block-hash-indexes",
    "strata.filter-partitions",
    "strata.index-key-is-user-key",
    "strata.index-partitions",
    "strata.log-number",
    "strata.top-level-filter-bytes",
    "strata.top-level-index-bytes",
];

const NUMBERS: [&str; 12] = [
    "strata.creation-time",
    "strata.data-blocks",
    "strata.data-bytes",
    "strata.deletions",
    "strata.entries",
    "strata.filter-bytes",
    "strata.index-bytes",
    "strata.largest-seq",
    "strata.range-deletions",
    "strata.raw-key-bytes",
    "strata.raw-value-bytes",
    "strata.smallest-seq",
];

impl TableProperties {
    fn number(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "strata.creation-time" => &mut self.creation_time,
            "strata.data-blocks" => &mut self.data_blocks,
            "strata.data-block-hash-indexes" => &mut self.data_block_hash_indexes,
            "strata.data-bytes" => &mut self.data_bytes,
            "strata.deletions" => &mut self.deletions,
            "strata.entries" => &mut self.entries,
            "strata.filter-bytes" => &mut self.filter_bytes,
            "strata.filter-partitions" => &mut self.filter_partitions,
            "strata.index-bytes" => &mut self.index_bytes,
            "strata.index-key-is-user-key" => &mut self.index_key_is_user_key,
            "strata.index-partitions" => &mut self.index_partitions,
            "strata.top-level-filter-bytes" => &mut self.top_level_filter_bytes,
            "strata.top-level-index-bytes" => &mut self.top_level_index_bytes,
            "strata.largest-seq" => &mut self.largest_seq,
            "strata.log-number" => &mut self.log_number,
            "strata.range-deletions" => &mut self.range_deletions,
            "strata.raw-key-bytes" => &mut self.raw_key_bytes,
            "strata.raw-value-bytes" => &mut self.raw_value_bytes,
            "strata.smallest-seq" => &mut self.smallest_seq,
            _ => return None,
        })
    }

    /// The properties block's contents.
    pub fn encode(&self) -> Vec<u8> {
        let mut copy = self.clone();
        let mut b = BlockBuilder::new(1);
        let mut entries: Vec<(&str, Vec<u8>)> = NUMBERS
            .iter()
            .map(|&n| {
                let mut v = Vec::new();
                put_varint64(&mut v, copy.number(n).map_or(0, |x| *x));
                (n, v)
            })
            .collect();
        for name in OPTIONAL_NUMBERS {
            let n = copy.number(name).map_or(0, |x| *x);
            if n != 0 {
                let mut v = Vec::new();
                put_varint64(&mut v, n);
                entries.push((name, v));
            }
        }
        entries.push(("strata.compression", self.compression.clone().into_bytes()));
        if !self.prefix_extractor.is_empty() {
            entries.push((PREFIX_EXTRACTOR, self.prefix_extractor.clone().into_bytes()));
        }
        if !self.comparator.is_empty() {
            entries.push(("strata.comparator", self.comparator.clone().into_bytes()));
        }
        if let Some(family) = &self.column_family {
            let number = |n: u64| {
                let mut v = Vec::new();
                put_varint64(&mut v, n);
                v
            };
            entries.push((FAMILY_NAME, family.name.clone().into_bytes()));
            entries.push((FAMILY_ID, number(u64::from(family.id))));
            if let Some(ttl) = family.ttl {
                entries.push((FAMILY_TTL, number(ttl)));
            }
        }
        for (name, value) in &self.user_properties {
            entries.push((name.as_str(), value.clone()));
        }
        entries.sort();
        for (name, value) in entries {
            b.add(name.as_bytes(), &value);
        }
        b.finish().to_vec()
    }

    /// Decodes a properties block; the error says what is wrong.
    pub fn decode(data: Vec<u8>) -> Result<TableProperties, String> {
        let block = std::sync::Arc::new(Block::new(data)?);
        let mut it = BlockIter::new(block, crate::table::block::BlockOrder::BYTEWISE);
        let mut p = TableProperties::default();
        let (mut family_name, mut family_id, mut family_ttl) = (None, None, None);
        let number = |name: &str, mut v: &[u8]| {
            get_varint64(&mut v).ok_or_else(|| format!("bad value of {name}"))
        };
        it.seek_to_first();
        while it.valid() {
            let name = String::from_utf8_lossy(it.key()).into_owned();
            if name == FAMILY_NAME {
                family_name = Some(String::from_utf8_lossy(it.value()).into_owned());
            } else if name == FAMILY_ID {
                let id = number(&name, it.value())?;
                family_id =
                    Some(u32::try_from(id).map_err(|_| format!("{name} {id} is not a family id"))?);
            } else if name == FAMILY_TTL {
                family_ttl = Some(number(&name, it.value())?);
            } else if name == "strata.compression" {
                p.compression = String::from_utf8_lossy(it.value()).into_owned();
            } else if name == PREFIX_EXTRACTOR {
                p.prefix_extractor = String::from_utf8_lossy(it.value()).into_owned();
            } else if name == "strata.comparator" {
                p.comparator = String::from_utf8_lossy(it.value()).into_owned();
            } else if let Some(slot) = p.number(&name) {
                let mut v = it.value();
                *slot = get_varint64(&mut v).ok_or_else(|| format!("bad value of {name}"))?;
            } else if !name.starts_with(crate::table::collector::RESERVED_PREFIX) {
                p.user_properties.insert(name, it.value().to_vec());
            }
            it.next();
        }
        if let Some(why) = it.corrupt() {
            return Err(why.to_string());
        }
        p.column_family = match (family_id, family_name) {
            (Some(id), Some(name)) => Some(TableFamily {
                id,
                name,
                ttl: family_ttl,
            }),
            (None, None) if family_ttl.is_none() => None,
            _ => return Err(format!("{FAMILY_NAME} and {FAMILY_ID} must come together")),
        };
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_round_trip() {
        let p = TableProperties {
            entries: 10,
            deletions: 2,
            raw_key_bytes: 100,
            raw_value_bytes: 1000,
            smallest_seq: 5,
            largest_seq: u64::MAX >> 8,
            compression: "zstd".into(),
            creation_time: 1_700_000_000,
            data_blocks: 3,
            data_bytes: 900,
            index_bytes: 40,
            filter_bytes: 64,
            range_deletions: 7,
            prefix_extractor: String::new(),
            comparator: "rocksdb.ReverseBytewiseComparator".into(),
            column_family: None,
            index_partitions: 0,
            top_level_index_bytes: 0,
            filter_partitions: 0,
            top_level_filter_bytes: 0,
            data_block_hash_indexes: 0,
            index_key_is_user_key: 0,
            log_number: 0,
            user_properties: BTreeMap::new(),
        };
        assert_eq!(TableProperties::decode(p.encode()).unwrap(), p);
        let collected = TableProperties {
            user_properties: BTreeMap::from([
                ("a.first".to_string(), b"1".to_vec()),
                ("zz.last".to_string(), vec![0, 255]),
                ("".to_string(), Vec::new()),
            ]),
            ..p.clone()
        };
        assert_eq!(
            TableProperties::decode(collected.encode()).unwrap(),
            collected
        );
        for ttl in [None, Some(3600)] {
            let in_family = TableProperties {
                column_family: Some(TableFamily {
                    id: 7,
                    name: "users".into(),
                    ttl,
                }),
                ..p.clone()
            };
            assert_eq!(
                TableProperties::decode(in_family.encode()).unwrap(),
                in_family
            );
        }
        // A name without an id (or the other way round) is not a family record.
        for lone in [FAMILY_NAME, FAMILY_ID] {
            let mut b = BlockBuilder::new(1);
            b.add(lone.as_bytes(), &[1]);
            let err = TableProperties::decode(b.finish().to_vec()).unwrap_err();
            assert!(err.contains("must come together"), "{err}");
        }
        // Without a family the block is what it was before the properties existed.
        assert!(!String::from_utf8_lossy(&p.encode()).contains(FAMILY_NAME));
        let with_prefix = TableProperties {
            prefix_extractor: "fixed:4".into(),
            ..p.clone()
        };
        assert_eq!(
            TableProperties::decode(with_prefix.encode()).unwrap(),
            with_prefix
        );
        // Without an extractor the block is what it was before the property existed.
        assert!(!String::from_utf8_lossy(&p.encode()).contains(PREFIX_EXTRACTOR));
        let partitioned = TableProperties {
            index_partitions: 12,
            top_level_index_bytes: 300,
            filter_partitions: 12,
            top_level_filter_bytes: 280,
            ..p.clone()
        };
        assert_eq!(
            TableProperties::decode(partitioned.encode()).unwrap(),
            partitioned
        );
        let hashed = TableProperties {
            data_block_hash_indexes: 9,
            ..p.clone()
        };
        assert_eq!(TableProperties::decode(hashed.encode()).unwrap(), hashed);
        let user_keys = TableProperties {
            index_key_is_user_key: 1,
            ..p.clone()
        };
        assert_eq!(
            TableProperties::decode(user_keys.encode()).unwrap(),
            user_keys
        );
        let logged = TableProperties {
            log_number: 1234,
            ..p.clone()
        };
        assert_eq!(TableProperties::decode(logged.encode()).unwrap(), logged);
        // Without partitions the block is what it was before partitions existed.
        for name in OPTIONAL_NUMBERS {
            assert!(
                !String::from_utf8_lossy(&p.encode()).contains(name),
                "{name}"
            );
        }
    }
}
