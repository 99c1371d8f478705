//! Conversions between Java values and the engine's: byte arrays, strings, options (the
//! native methods on the hot path read their arrays and direct buffers through `raw.rs`).
//!
//! Options cross as one string of `name=value` lines (built by the Java `Options`,
//! `WriteOptions` and `TransactionOptions` classes), parsed here with the engine's field
//! names; an unknown name or a value that does not parse is an `InvalidArgumentException`
//! naming the option.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use jni::objects::{JByteArray, JString};
use jni::Env;
use strata::{
    CfOptions, CompactionStyle, Compression, DataBlockIndexType, IndexType, MergeOperator, Options,
    PrepopulateBlockCache, StringAppend, TransactionOptions, UInt64Add, WalRecoveryMode,
    WriteOptions,
};

use crate::error::{BindError, Result};

/// The bytes of a Java array (a copy: the engine reads them after the JVM may move the
/// array). Null is refused, naming `what`.
pub fn bytes(env: &Env<'_>, array: &JByteArray<'_>, what: &str) -> Result<Vec<u8>> {
    if array.is_null() {
        return Err(BindError::Arg(format!("{what} is null")));
    }
    Ok(env.convert_byte_array(array)?)
}

/// An optional byte array: null is `None`.
pub fn optional_bytes(env: &Env<'_>, array: &JByteArray<'_>) -> Result<Option<Vec<u8>>> {
    if array.is_null() {
        return Ok(None);
    }
    Ok(Some(env.convert_byte_array(array)?))
}

/// A Java string, or an error naming `what` when it is null.
pub fn string(env: &Env<'_>, s: &JString<'_>, what: &str) -> Result<String> {
    if s.is_null() {
        return Err(BindError::Arg(format!("{what} is null")));
    }
    Ok(s.try_to_string(env)?)
}

/// The `name=value` pairs of an options string, in order.
fn pairs(text: &str) -> Result<Vec<(&str, &str)>> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once('=') else {
            return Err(BindError::Arg(format!(
                "option '{line}' has no value: write it as name=value"
            )));
        };
        out.push((name.trim(), value.trim()));
    }
    Ok(out)
}

/// Parses the value of option `name`, naming it in the error.
fn parse<T: FromStr>(name: &str, value: &str) -> Result<T> {
    value.parse().map_err(|_| {
        BindError::Arg(format!(
            "option {name}: cannot read '{value}' as {}",
            kind_of::<T>()
        ))
    })
}

/// What a value of type `T` is, in words.
fn kind_of<T>() -> &'static str {
    match std::any::type_name::<T>() {
        "bool" => "true or false",
        "f64" | "f32" => "a number",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, not negative",
        _ => "a number",
    }
}

fn unknown_value(name: &str, value: &str, choices: &str) -> BindError {
    BindError::Arg(format!(
        "option {name}: unknown value '{value}' ({choices})"
    ))
}

fn compression(name: &str, value: &str) -> Result<Compression> {
    match value.to_ascii_lowercase().as_str() {
        "none" => Ok(Compression::None),
        "snappy" => Ok(Compression::Snappy),
        "lz4" => Ok(Compression::Lz4),
        "zstd" => Ok(Compression::Zstd),
        _ => Err(unknown_value(name, value, "none, snappy, lz4 or zstd")),
    }
}

fn merge_operator(name: &str, value: &str) -> Result<Option<Arc<dyn MergeOperator>>> {
    match value.to_ascii_lowercase().as_str() {
        "" | "none" => Ok(None),
        "uint64add" => Ok(Some(Arc::new(UInt64Add))),
        // RocksDB's stringappend joins with ',' by default.
        "stringappend" => Ok(Some(Arc::new(StringAppend::new(b",")))),
        _ => Err(unknown_value(
            name,
            value,
            "uint64add, stringappend or none",
        )),
    }
}

/// Sets the column family option `$n` of `$t` (an `Options` or a `CfOptions`: the fields
/// have the same names) from `$v`; evaluates to false for a name that is not one.
macro_rules! set_family_option {
    ($t:expr, $n:expr, $v:expr) => {{
        let (t, n, v): (_, &str, &str) = ($t, $n, $v);
        match n {
            "write_buffer_size" => t.write_buffer_size = parse(n, v)?,
            "max_write_buffer_number" => t.max_write_buffer_number = parse(n, v)?,
            "memtable_prefix_bloom_size_ratio" => t.memtable_prefix_bloom_size_ratio = parse(n, v)?,
            "memtable_whole_key_filtering" => t.memtable_whole_key_filtering = parse(n, v)?,
            "block_size" => t.block_size = parse(n, v)?,
            "block_restart_interval" => t.block_restart_interval = parse(n, v)?,
            "bloom_bits_per_key" => t.bloom_bits_per_key = parse(n, v)?,
            "index_type" => {
                t.index_type = IndexType::from_name(v)
                    .ok_or_else(|| unknown_value(n, v, "binary_search or two_level_index_search"))?
            }
            "partition_filters" => t.partition_filters = parse(n, v)?,
            "data_block_index_type" => {
                t.data_block_index_type = DataBlockIndexType::from_name(v)
                    .ok_or_else(|| unknown_value(n, v, "binary_search or binary_and_hash"))?
            }
            "compression" => t.compression = compression(n, v)?,
            "bottommost_compression" => t.bottommost_compression = Some(compression(n, v)?),
            "level0_file_num_compaction_trigger" => {
                t.level0_file_num_compaction_trigger = parse(n, v)?
            }
            "level0_slowdown_writes_trigger" => t.level0_slowdown_writes_trigger = parse(n, v)?,
            "level0_stop_writes_trigger" => t.level0_stop_writes_trigger = parse(n, v)?,
            "max_bytes_for_level_base" => t.max_bytes_for_level_base = parse(n, v)?,
            "max_bytes_for_level_multiplier" => t.max_bytes_for_level_multiplier = parse(n, v)?,
            "num_levels" => t.num_levels = parse(n, v)?,
            "target_file_size_base" => t.target_file_size_base = parse(n, v)?,
            "disable_auto_compactions" => t.disable_auto_compactions = parse(n, v)?,
            "compaction_style" => {
                t.compaction_style = match v.to_ascii_lowercase().as_str() {
                    "leveled" | "level" => CompactionStyle::Leveled,
                    "universal" => CompactionStyle::Universal,
                    _ => return Err(unknown_value(n, v, "leveled or universal")),
                }
            }
            "max_subcompactions" => t.max_subcompactions = parse(n, v)?,
            "merge_operator" => t.merge_operator = merge_operator(n, v)?,
            "enable_blob_files" => t.enable_blob_files = parse(n, v)?,
            "min_blob_size" => t.min_blob_size = parse(n, v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }};
}

fn set_family(cf: &mut CfOptions, name: &str, value: &str) -> Result<bool> {
    set_family_option!(cf, name, value)
}

fn set_db_family(o: &mut Options, name: &str, value: &str) -> Result<bool> {
    set_family_option!(o, name, value)
}

fn unknown(name: &str) -> BindError {
    BindError::Arg(format!("unknown option '{name}'"))
}

/// What `Strata.open` was given, turned into the engine's options.
pub struct OpenOptions {
    pub options: Options,
    pub read_only: bool,
    /// `transaction_db=true`: pessimistic transactions, with these defaults.
    pub transactions: Option<TransactionOptions>,
}

/// Parses the options of `Strata.open`.
pub fn open_options(text: &str) -> Result<OpenOptions> {
    let mut options = Options::default();
    let mut read_only = false;
    let mut transaction_db = false;
    let mut lock_timeout = None;
    for (n, v) in pairs(text)? {
        let o = &mut options;
        match n {
            "read_only" => read_only = parse(n, v)?,
            "transaction_db" => transaction_db = parse(n, v)?,
            "lock_timeout_ms" => lock_timeout = Some(Duration::from_millis(parse(n, v)?)),
            "create_if_missing" => o.create_if_missing = parse(n, v)?,
            "error_if_exists" => o.error_if_exists = parse(n, v)?,
            "create_missing_column_families" => o.create_missing_column_families = parse(n, v)?,
            "block_cache_size" => o.block_cache_size = parse(n, v)?,
            "cache_index_and_filter_blocks" => o.cache_index_and_filter_blocks = parse(n, v)?,
            "pin_l0_filter_and_index_blocks_in_cache" => {
                o.pin_l0_filter_and_index_blocks_in_cache = parse(n, v)?
            }
            "prepopulate_block_cache" => {
                o.prepopulate_block_cache = PrepopulateBlockCache::from_name(v)
                    .ok_or_else(|| unknown_value(n, v, "disable or flush_only"))?
            }
            "max_open_files" => {
                // -1, as in RocksDB: every table stays open once read.
                let files: i64 = parse(n, v)?;
                o.max_open_files = usize::try_from(files).unwrap_or(Options::UNLIMITED_OPEN_FILES)
            }
            "use_direct_reads" => o.use_direct_reads = parse(n, v)?,
            "use_direct_io_for_flush_and_compaction" => {
                o.use_direct_io_for_flush_and_compaction = parse(n, v)?
            }
            "allow_mmap_reads" => o.allow_mmap_reads = parse(n, v)?,
            "manual_wal_flush" => o.manual_wal_flush = parse(n, v)?,
            "wal_compression" => o.wal_compression = compression(n, v)?,
            "max_background_jobs" => o.max_background_jobs = parse(n, v)?,
            "wal_recovery_mode" => {
                o.wal_recovery_mode = match v {
                    "tolerate_corrupted_tail" => WalRecoveryMode::TolerateCorruptedTail,
                    "point_in_time" => WalRecoveryMode::PointInTime,
                    _ => {
                        return Err(unknown_value(
                            n,
                            v,
                            "tolerate_corrupted_tail or point_in_time",
                        ))
                    }
                }
            }
            _ => {
                if !set_db_family(o, n, v)? {
                    return Err(unknown(n));
                }
            }
        }
    }
    if transaction_db && read_only {
        return Err(BindError::Arg(
            "transaction_db and read_only cannot be combined: a read-only database has no \
             transactions"
                .into(),
        ));
    }
    if lock_timeout.is_some() && !transaction_db {
        return Err(BindError::Arg(
            "option lock_timeout_ms needs transaction_db: only pessimistic transactions take \
             locks"
                .into(),
        ));
    }
    let transactions = transaction_db.then(|| {
        let mut t = TransactionOptions::default();
        if let Some(timeout) = lock_timeout {
            t.lock_timeout = timeout;
        }
        t
    });
    Ok(OpenOptions {
        options,
        read_only,
        transactions,
    })
}

/// Parses column family options over `base`; only family options are accepted.
pub fn cf_options(base: &CfOptions, text: &str) -> Result<CfOptions> {
    let mut cf = base.clone();
    for (n, v) in pairs(text)? {
        if !set_family(&mut cf, n, v)? {
            return Err(BindError::Arg(format!(
                "option '{n}' is not a column family option"
            )));
        }
    }
    Ok(cf)
}

/// The engine's `WriteOptions` from the fields of the Java `WriteOptions`.
pub fn write_options(sync: bool, disable_wal: bool) -> WriteOptions {
    let mut w = WriteOptions::default();
    w.sync = sync;
    w.disable_wal = disable_wal;
    w
}

/// The engine's `TransactionOptions` from the fields of the Java `TransactionOptions`, over
/// `base`: a negative duration means "as `base`" (lock timeout) or "never" (expiration).
pub fn transaction_options(
    base: &TransactionOptions,
    lock_timeout_ms: i64,
    deadlock_detect: bool,
    expiration_ms: i64,
    set_snapshot: bool,
) -> TransactionOptions {
    let mut t = base.clone();
    if let Ok(ms) = u64::try_from(lock_timeout_ms) {
        t.lock_timeout = Duration::from_millis(ms);
    }
    t.deadlock_detect = deadlock_detect;
    t.expiration = u64::try_from(expiration_ms).ok().map(Duration::from_millis);
    t.set_snapshot = set_snapshot;
    t
}
