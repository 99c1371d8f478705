//! The options by name: one table of every option that has a text form, with the section of
//! the OPTIONS file it belongs to, the kind of its value, whether an open database can change
//! it ([`crate::Db::set_options`], [`crate::Db::set_db_options`]), and how to read and write
//! it in an [`Options`]. The OPTIONS file (`options/file.rs`) and the online setters both go
//! through this table, so an option added here is written, read back and settable at once.
//!
//! Names are RocksDB's where RocksDB has the option (`write_buffer_size`,
//! `level0_slowdown_writes_trigger`, `compaction_options_universal.size_ratio`, ...). Values:
//! integers in decimal, `true`/`false`, floating-point numbers as Rust prints them (which
//! read back exactly), and the lower-case names enums use elsewhere (`lz4`,
//! `two_level_index_search`), lists of them separated by `:` (`compression_per_level=
//! none:lz4:zstd`, empty for none). `bottommost_compression=disable` means "as `compression`"
//! (RocksDB's `kDisableCompressionOption`); `ttl=0` means no ttl.
//!
//! Options that are objects (the comparator, merge operator, prefix extractor, compaction
//! filter, file system, clock, listeners, shared caches and budgets) have no text form: they
//! are not in the table, and an application loading an OPTIONS file sets them again.
//!
//! Invariants: names are unique; every mutable option is read by the engine from the
//! current options (the family's state in `db` or the database's), never from the
//! options as opened; each entry's `example` is a valid value other than the default.

use std::sync::OnceLock;
use std::time::Duration;

use super::{Options, PrepopulateBlockCache, WalRecoveryMode};
use crate::compaction::CompactionStyle;
use crate::table::{ChecksumType, Compression, DataBlockIndexType, IndexType};

/// The section of the OPTIONS file an option is written in, and which setter takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Database-wide (`[DBOptions]`; [`crate::Db::set_db_options`]).
    Db,
    /// A column family's (`[CFOptions "name"]`; [`crate::Db::set_cf_options`]).
    Family,
    /// A column family's table format (`[TableOptions/BlockBasedTable "name"]`).
    Table,
}

/// The kind of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    /// A non-negative integer.
    Integer,
    /// A floating-point number.
    Float,
    /// One of a list of names.
    Enum(&'static [&'static str]),
    /// Seconds, 0 for none.
    Seconds,
    /// A list of names from the list given, separated by `:` (RocksDB's separator for
    /// `compression_per_level`); empty for none.
    EnumList(&'static [&'static str]),
}

/// One option of the table.
#[derive(Clone, Copy)]
pub struct OptionInfo {
    /// Its name (RocksDB's where RocksDB has it).
    pub name: &'static str,
    /// Where it belongs.
    pub section: Section,
    /// What its value is.
    pub kind: Kind,
    /// Whether an open database can change it.
    pub mutable: bool,
    /// A valid value other than the default (for tests and examples).
    pub example: &'static str,
    /// Its value in `options`, as text.
    pub get: fn(&Options) -> String,
    /// Sets it in `options` from text; the error says what the text should have been.
    pub set: fn(&mut Options, &str) -> Result<(), String>,
}

impl std::fmt::Debug for OptionInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionInfo")
            .field("name", &self.name)
            .field("section", &self.section)
            .field("kind", &self.kind)
            .field("mutable", &self.mutable)
            .finish_non_exhaustive()
    }
}

/// A value with a text form.
trait OptionValue: Sized {
    const KIND: Kind;
    fn format(&self) -> String;
    fn parse(text: &str) -> Result<Self, String>;
}

macro_rules! integer_values {
    ($($t:ty),*) => {$(
        impl OptionValue for $t {
            const KIND: Kind = Kind::Integer;
            fn format(&self) -> String {
                self.to_string()
            }
            fn parse(text: &str) -> Result<Self, String> {
                text.parse().map_err(|_| {
                    format!("a whole number between 0 and {}", <$t>::MAX)
                })
            }
        }
    )*};
}
integer_values!(u32, u64, usize);

impl OptionValue for bool {
    const KIND: Kind = Kind::Bool;
    fn format(&self) -> String {
        self.to_string()
    }
    fn parse(text: &str) -> Result<Self, String> {
        match text {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err("true or false".into()),
        }
    }
}

impl OptionValue for f64 {
    const KIND: Kind = Kind::Float;
    fn format(&self) -> String {
        // Rust prints the shortest text that reads back as the same number.
        self.to_string()
    }
    fn parse(text: &str) -> Result<Self, String> {
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err("a finite number".into()),
        }
    }
}

impl OptionValue for Option<Duration> {
    const KIND: Kind = Kind::Seconds;
    fn format(&self) -> String {
        self.map_or(0, |d| d.as_secs()).to_string()
    }
    fn parse(text: &str) -> Result<Self, String> {
        let secs: u64 = text
            .parse()
            .map_err(|_| "a whole number of seconds (0 for none)".to_string())?;
        Ok((secs > 0).then(|| Duration::from_secs(secs)))
    }
}

/// Enums by name: the type, its values and their names.
macro_rules! enum_values {
    ($t:ty, $names:ident, [$($v:expr => $n:literal),* $(,)?]) => {
        const $names: &[&str] = &[$($n),*];
        impl OptionValue for $t {
            const KIND: Kind = Kind::Enum($names);
            fn format(&self) -> String {
                $(if *self == $v { return $n.to_string(); })*
                String::new()
            }
            fn parse(text: &str) -> Result<Self, String> {
                match text {
                    $($n => Ok($v),)*
                    _ => Err(format!("one of {}", $names.join(", "))),
                }
            }
        }
    };
}

enum_values!(Compression, COMPRESSIONS, [
    Compression::None => "none",
    Compression::Snappy => "snappy",
    Compression::Lz4 => "lz4",
    Compression::Zstd => "zstd",
]);
impl OptionValue for Vec<Compression> {
    const KIND: Kind = Kind::EnumList(COMPRESSIONS);
    fn format(&self) -> String {
        let names: Vec<String> = self.iter().map(OptionValue::format).collect();
        names.join(":")
    }
    fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        text.split(':')
            .map(|name| {
                <Compression as OptionValue>::parse(name).map_err(|_| {
                    format!(
                        "names separated by ':', each one of {} (`{name}` is none of them)",
                        COMPRESSIONS.join(", ")
                    )
                })
            })
            .collect()
    }
}
enum_values!(Option<Compression>, BOTTOMMOST_COMPRESSIONS, [
    None => "disable",
    Some(Compression::None) => "none",
    Some(Compression::Snappy) => "snappy",
    Some(Compression::Lz4) => "lz4",
    Some(Compression::Zstd) => "zstd",
]);
enum_values!(ChecksumType, CHECKSUM_TYPES, [
    ChecksumType::Crc32c => "crc32c",
    ChecksumType::Xxh3 => "xxh3",
]);
enum_values!(CompactionStyle, COMPACTION_STYLES, [
    CompactionStyle::Leveled => "level",
    CompactionStyle::Universal => "universal",
]);
enum_values!(IndexType, INDEX_TYPES, [
    IndexType::BinarySearch => "binary_search",
    IndexType::TwoLevelIndexSearch => "two_level_index_search",
]);
enum_values!(DataBlockIndexType, DATA_BLOCK_INDEX_TYPES, [
    DataBlockIndexType::BinarySearch => "binary_search",
    DataBlockIndexType::BinaryAndHash => "binary_and_hash",
]);
enum_values!(WalRecoveryMode, WAL_RECOVERY_MODES, [
    WalRecoveryMode::TolerateCorruptedTail => "tolerate_corrupted_tail_records",
    WalRecoveryMode::PointInTime => "point_in_time_recovery",
]);
enum_values!(PrepopulateBlockCache, PREPOPULATE_BLOCK_CACHE, [
    PrepopulateBlockCache::Disable => "disable",
    PrepopulateBlockCache::FlushOnly => "flush_only",
]);

/// The kind of the value `field` reads.
fn kind_of<T: OptionValue>(_field: fn(&Options) -> &T) -> Kind {
    T::KIND
}

/// One entry: `option!(Section, mutable, "name", field.path, "example")`.
macro_rules! option {
    ($section:ident, $mutable:expr, $name:literal, $($field:ident).+, $example:literal) => {
        OptionInfo {
            name: $name,
            section: Section::$section,
            kind: kind_of(|o: &Options| &o.$($field).+),
            mutable: $mutable,
            example: $example,
            get: |o: &Options| OptionValue::format(&o.$($field).+),
            set: |o: &mut Options, text: &str| {
                o.$($field).+ = OptionValue::parse(text)?;
                Ok(())
            },
        }
    };
}

/// Changeable on an open database.
const MUTABLE: bool = true;
/// Fixed once the database (or family) is open.
const FIXED: bool = false;

/// Every option with a text form, in the order the OPTIONS file lists them.
pub fn all() -> &'static [OptionInfo] {
    static TABLE: OnceLock<Vec<OptionInfo>> = OnceLock::new();
    TABLE.get_or_init(|| {
        vec![
            // Database-wide.
            option!(Db, FIXED, "create_if_missing", create_if_missing, "true"),
            option!(Db, FIXED, "error_if_exists", error_if_exists, "true"),
            option!(
                Db,
                FIXED,
                "create_missing_column_families",
                create_missing_column_families,
                "true"
            ),
            option!(
                Db,
                FIXED,
                "wal_recovery_mode",
                wal_recovery_mode,
                "tolerate_corrupted_tail_records"
            ),
            option!(
                Db,
                FIXED,
                "max_write_group_bytes",
                max_write_group_bytes,
                "65536"
            ),
            option!(Db, FIXED, "block_cache_size", block_cache_size, "1048576"),
            option!(
                Db,
                FIXED,
                "cache_index_and_filter_blocks",
                cache_index_and_filter_blocks,
                "true"
            ),
            option!(
                Db,
                FIXED,
                "pin_top_level_index_and_filter",
                pin_top_level_index_and_filter,
                "false"
            ),
            option!(
                Db,
                FIXED,
                "pin_l0_filter_and_index_blocks_in_cache",
                pin_l0_filter_and_index_blocks_in_cache,
                "true"
            ),
            option!(
                Db,
                FIXED,
                "prepopulate_block_cache",
                prepopulate_block_cache,
                "flush_only"
            ),
            option!(
                Db,
                FIXED,
                "warm_compaction_outputs",
                warm_compaction_outputs,
                "false"
            ),
            option!(
                Db,
                FIXED,
                "uncache_aggressiveness",
                uncache_aggressiveness,
                "0"
            ),
            option!(Db, FIXED, "max_open_files", max_open_files, "500"),
            option!(Db, FIXED, "use_direct_reads", use_direct_reads, "true"),
            option!(
                Db,
                FIXED,
                "use_direct_io_for_flush_and_compaction",
                use_direct_io_for_flush_and_compaction,
                "true"
            ),
            option!(Db, FIXED, "allow_mmap_reads", allow_mmap_reads, "true"),
            option!(
                Db,
                MUTABLE,
                "compaction_readahead_size",
                compaction_readahead_size,
                "65536"
            ),
            option!(Db, FIXED, "max_log_file_size", max_log_file_size, "1048576"),
            option!(Db, FIXED, "keep_log_file_num", keep_log_file_num, "3"),
            option!(Db, MUTABLE, "max_background_jobs", max_background_jobs, "4"),
            option!(
                Db,
                MUTABLE,
                "max_total_wal_size",
                max_total_wal_size,
                "1048576"
            ),
            option!(Db, FIXED, "atomic_flush", atomic_flush, "true"),
            option!(
                Db,
                FIXED,
                "avoid_flush_during_recovery",
                avoid_flush_during_recovery,
                "true"
            ),
            option!(Db, FIXED, "manual_wal_flush", manual_wal_flush, "true"),
            option!(Db, FIXED, "wal_compression", wal_compression, "zstd"),
            option!(
                Db,
                FIXED,
                "allow_ingest_behind",
                allow_ingest_behind,
                "true"
            ),
            option!(Db, FIXED, "wal_ttl_seconds", wal_ttl_seconds, "3600"),
            option!(Db, FIXED, "wal_size_limit_mb", wal_size_limit_mb, "64"),
            option!(
                Db,
                FIXED,
                "db_write_buffer_size",
                db_write_buffer_size,
                "1048576"
            ),
            // Column family: memtables, compaction, blobs.
            option!(
                Family,
                MUTABLE,
                "write_buffer_size",
                write_buffer_size,
                "1048576"
            ),
            option!(
                Family,
                MUTABLE,
                "max_write_buffer_number",
                max_write_buffer_number,
                "4"
            ),
            option!(
                Family,
                MUTABLE,
                "memtable_prefix_bloom_size_ratio",
                memtable_prefix_bloom_size_ratio,
                "0.1"
            ),
            option!(
                Family,
                MUTABLE,
                "memtable_point_index_ratio",
                memtable_point_index_ratio,
                "0.25"
            ),
            option!(
                Family,
                MUTABLE,
                "memtable_whole_key_filtering",
                memtable_whole_key_filtering,
                "false"
            ),
            option!(Family, MUTABLE, "compression", compression, "lz4"),
            option!(
                Family,
                MUTABLE,
                "compression_per_level",
                compression_per_level,
                "none:none:lz4:zstd"
            ),
            option!(
                Family,
                MUTABLE,
                "bottommost_compression",
                bottommost_compression,
                "zstd"
            ),
            option!(
                Family,
                MUTABLE,
                "level0_file_num_compaction_trigger",
                level0_file_num_compaction_trigger,
                "2"
            ),
            option!(
                Family,
                MUTABLE,
                "level0_slowdown_writes_trigger",
                level0_slowdown_writes_trigger,
                "24"
            ),
            option!(
                Family,
                MUTABLE,
                "level0_stop_writes_trigger",
                level0_stop_writes_trigger,
                "40"
            ),
            option!(
                Family,
                MUTABLE,
                "max_bytes_for_level_base",
                max_bytes_for_level_base,
                "1048576"
            ),
            option!(
                Family,
                MUTABLE,
                "max_bytes_for_level_multiplier",
                max_bytes_for_level_multiplier,
                "8.5"
            ),
            option!(Family, FIXED, "num_levels", num_levels, "5"),
            option!(
                Family,
                MUTABLE,
                "target_file_size_base",
                target_file_size_base,
                "1048576"
            ),
            option!(
                Family,
                MUTABLE,
                "target_file_size_multiplier",
                target_file_size_multiplier,
                "2"
            ),
            option!(
                Family,
                MUTABLE,
                "disable_auto_compactions",
                disable_auto_compactions,
                "true"
            ),
            option!(
                Family,
                FIXED,
                "read_triggered_compaction",
                read_triggered_compaction,
                "false"
            ),
            option!(
                Family,
                FIXED,
                "compaction_style",
                compaction_style,
                "universal"
            ),
            option!(
                Family,
                MUTABLE,
                "compaction_options_universal.size_ratio",
                universal.size_ratio,
                "5"
            ),
            option!(
                Family,
                MUTABLE,
                "compaction_options_universal.min_merge_width",
                universal.min_merge_width,
                "3"
            ),
            option!(
                Family,
                MUTABLE,
                "compaction_options_universal.max_merge_width",
                universal.max_merge_width,
                "10"
            ),
            option!(
                Family,
                MUTABLE,
                "compaction_options_universal.max_size_amplification_percent",
                universal.max_size_amplification_percent,
                "150"
            ),
            option!(
                Family,
                MUTABLE,
                "enable_blob_files",
                enable_blob_files,
                "true"
            ),
            option!(Family, MUTABLE, "min_blob_size", min_blob_size, "1024"),
            option!(Family, MUTABLE, "blob_file_size", blob_file_size, "1048576"),
            option!(
                Family,
                FIXED,
                "blob_separation_at_write",
                blob_separation_at_write,
                "true"
            ),
            option!(
                Family,
                MUTABLE,
                "enable_blob_garbage_collection",
                enable_blob_garbage_collection,
                "true"
            ),
            option!(
                Family,
                MUTABLE,
                "blob_garbage_collection_age_cutoff",
                blob_garbage_collection_age_cutoff,
                "0.5"
            ),
            option!(
                Family,
                MUTABLE,
                "blob_garbage_collection_force_threshold",
                blob_garbage_collection_force_threshold,
                "0.8"
            ),
            option!(
                Family,
                MUTABLE,
                "max_subcompactions",
                max_subcompactions,
                "2"
            ),
            option!(
                Family,
                MUTABLE,
                "max_compaction_bytes",
                max_compaction_bytes,
                "1048576"
            ),
            option!(
                Family,
                MUTABLE,
                "soft_pending_compaction_bytes_limit",
                soft_pending_compaction_bytes_limit,
                "1048576"
            ),
            option!(
                Family,
                MUTABLE,
                "hard_pending_compaction_bytes_limit",
                hard_pending_compaction_bytes_limit,
                "0"
            ),
            option!(Family, MUTABLE, "ttl", ttl, "3600"),
            option!(
                Family,
                MUTABLE,
                "periodic_compaction_seconds",
                periodic_compaction_seconds,
                "86400"
            ),
            option!(
                Family,
                MUTABLE,
                "table_ttl_seconds",
                table_ttl_seconds,
                "86400"
            ),
            option!(
                Family,
                MUTABLE,
                "fifo.max_table_files_size",
                fifo.max_table_files_size,
                "268435456"
            ),
            option!(
                Family,
                MUTABLE,
                "fifo.allow_compaction",
                fifo.allow_compaction,
                "true"
            ),
            option!(
                Family,
                MUTABLE,
                "compression_opts.max_dict_bytes",
                compression_opts.max_dict_bytes,
                "16384"
            ),
            option!(
                Family,
                MUTABLE,
                "compression_opts.zstd_max_train_bytes",
                compression_opts.zstd_max_train_bytes,
                "1638400"
            ),
            // Column family: table format.
            option!(Table, FIXED, "block_size", block_size, "8192"),
            option!(
                Table,
                FIXED,
                "block_size_deviation",
                block_size_deviation,
                "0"
            ),
            option!(
                Table,
                FIXED,
                "block_restart_interval",
                block_restart_interval,
                "8"
            ),
            option!(Table, FIXED, "bloom_bits_per_key", bloom_bits_per_key, "0"),
            option!(
                Table,
                FIXED,
                "index_type",
                index_type,
                "two_level_index_search"
            ),
            option!(Table, FIXED, "partition_filters", partition_filters, "true"),
            option!(
                Table,
                FIXED,
                "metadata_block_size",
                metadata_block_size,
                "8192"
            ),
            option!(
                Table,
                FIXED,
                "data_block_index_type",
                data_block_index_type,
                "binary_and_hash"
            ),
            option!(
                Table,
                FIXED,
                "data_block_hash_table_util_ratio",
                data_block_hash_table_util_ratio,
                "0.5"
            ),
            option!(Table, FIXED, "checksum", checksum, "xxh3"),
        ]
    })
}

/// The option named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static OptionInfo> {
    all().iter().find(|o| o.name == name)
}

/// The options of one section (the family's two sections when `family`).
pub fn in_sections(family: bool) -> impl Iterator<Item = &'static OptionInfo> {
    all()
        .iter()
        .filter(move |o| (o.section != Section::Db) == family)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique() {
        let mut seen = HashSet::new();
        for o in all() {
            assert!(seen.insert(o.name), "{} is listed twice", o.name);
        }
    }

    #[test]
    fn every_value_reads_back_as_written() {
        let defaults = Options::default();
        for o in all() {
            let mut options = Options::default();
            (o.set)(&mut options, &(o.get)(&defaults))
                .unwrap_or_else(|e| panic!("{}: default does not parse: {e}", o.name));
            assert_eq!((o.get)(&options), (o.get)(&defaults), "{}", o.name);
            (o.set)(&mut options, o.example)
                .unwrap_or_else(|e| panic!("{}: example does not parse: {e}", o.name));
            assert_eq!((o.get)(&options), o.example, "{}", o.name);
            assert_ne!(
                o.example,
                (o.get)(&defaults),
                "{}: example is the default",
                o.name
            );
        }
    }

    #[test]
    fn bad_values_are_refused_naming_what_is_wanted() {
        for o in all() {
            let mut options = Options::default();
            let bad = match o.kind {
                Kind::Bool => "yes",
                Kind::Integer | Kind::Seconds => "-1",
                Kind::Float => "NaN",
                Kind::Enum(_) => "no-such-value",
                Kind::EnumList(_) => "lz4:no-such-value",
            };
            let why = (o.set)(&mut options, bad).expect_err(o.name);
            assert!(!why.is_empty(), "{}", o.name);
            if let Kind::Enum(names) | Kind::EnumList(names) = o.kind {
                assert!(why.contains(names[0]), "{}: {why}", o.name);
            }
        }
    }

    /// A list reads back as written, empty included, and one bad name refuses the whole
    /// value, naming that name.
    #[test]
    fn compression_lists_read_back_and_a_bad_name_is_named() {
        let info = find("compression_per_level").expect("listed");
        let cases: [(&str, Result<Vec<Compression>, &str>); 5] = [
            ("", Ok(vec![])),
            ("zstd", Ok(vec![Compression::Zstd])),
            (
                "none:lz4:zstd",
                Ok(vec![Compression::None, Compression::Lz4, Compression::Zstd]),
            ),
            ("lz4::zstd", Err("`` is none")),
            ("lz4:gzip", Err("`gzip` is none")),
        ];
        for (text, expected) in cases {
            let mut options = Options {
                compression_per_level: vec![Compression::Snappy],
                ..Options::default()
            };
            match (expected, (info.set)(&mut options, text)) {
                (Ok(levels), Ok(())) => {
                    assert_eq!(options.compression_per_level, levels, "{text}");
                    assert_eq!((info.get)(&options), text);
                }
                (Err(part), Err(why)) => {
                    assert!(why.contains(part), "{text}: {why}");
                    assert_eq!(options.compression_per_level, vec![Compression::Snappy]);
                }
                (expected, got) => panic!("{text}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn floats_and_integers_keep_their_exact_value() {
        let mut options = Options::default();
        let info = find("max_bytes_for_level_multiplier").expect("listed");
        (info.set)(&mut options, "0.1").expect("parses");
        assert_eq!(options.max_bytes_for_level_multiplier, 0.1);
        let info = find("max_bytes_for_level_base").expect("listed");
        (info.set)(&mut options, &u64::MAX.to_string()).expect("parses");
        assert_eq!(options.max_bytes_for_level_base, u64::MAX);
    }
}
