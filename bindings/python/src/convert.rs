//! Conversions between Python values and the engine's: byte strings, options, errors.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};

use strata::{
    BytewiseComparator, CfOptions, ChecksumType, CompactionFilter, CompactionStyle, Comparator,
    Compression, CompressionOptions, DataBlockIndexType, ErrorKind, EventListener, IndexType,
    MergeOperator, Options, PrefixExtractor, PrepopulateBlockCache, ReverseBytewiseComparator,
    StringAppend, TransactionOptions, TxnFailure, UInt64Add, WalRecoveryMode,
};

use crate::callbacks::{PyCompactionFilter, PyComparator, PyListener, PyMergeOperator};
use crate::errors;

/// The bytes of a key, value or operand. `bytes` is borrowed (it is immutable, and the caller
/// holds it for the whole call); `bytearray` and `memoryview` are copied, because the GIL is
/// released while the engine reads them and another thread could change them meanwhile.
/// `str` is refused: which encoding to use is the caller's choice, not ours.
pub fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if obj.cast::<PyMemoryView>().is_ok() {
        // `tobytes` rather than the buffer protocol: the stable ABI of Python 3.9 lacks it.
        let copy = obj.call_method0("tobytes")?;
        let copy = copy.cast::<PyBytes>()?;
        return Ok(Cow::Owned(copy.as_bytes().to_vec()));
    }
    if obj.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be bytes, not str: encode it first (for example {what}.encode())"
        )));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be bytes, bytearray or memoryview, not {}",
        obj.get_type().name()?
    )))
}

/// The keys of `multi_get`: an iterable of keys, each named by its index in errors. One key
/// alone is refused (iterating bytes would give ints): wrap it in a list.
pub fn keys_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    let single = obj.cast::<PyBytes>().is_ok()
        || obj.cast::<PyByteArray>().is_ok()
        || obj.cast::<PyMemoryView>().is_ok()
        || obj.cast::<PyString>().is_ok();
    let type_name = || {
        obj.get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string())
    };
    if single {
        return Err(PyTypeError::new_err(format!(
            "keys must be an iterable of keys, not one {}: wrap a single key in a list",
            type_name()
        )));
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "keys must be an iterable of keys (bytes), not {}",
            type_name()
        ))
    })?;
    let mut keys = Vec::new();
    for (i, item) in iter.enumerate() {
        keys.push(bytes_arg(&item?, &format!("keys[{i}]"))?.into_owned());
    }
    Ok(keys)
}

/// An optional range bound: `None` or bytes.
pub fn bound_arg(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Vec<u8>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => Ok(Some(bytes_arg(o, what)?.into_owned())),
    }
}

/// The Python exception for an engine error, of the class of its kind (a transaction
/// failure: of the class of the failure, below `Busy`).
pub fn to_py(e: strata::Error) -> PyErr {
    let msg = e.to_string();
    if let Some(failure) = e.txn_failure() {
        return match failure {
            TxnFailure::Conflict => errors::TransactionConflict::new_err(msg),
            TxnFailure::Deadlock => errors::Deadlock::new_err(msg),
            TxnFailure::LockTimeout => errors::LockTimeout::new_err(msg),
            TxnFailure::Expired => errors::TransactionExpired::new_err(msg),
            // A cause the engine may add later: the class of every transaction failure.
            _ => errors::TransactionError::new_err(msg),
        };
    }
    match e.kind() {
        ErrorKind::Io => errors::IOError::new_err(msg),
        ErrorKind::Corruption => errors::Corruption::new_err(msg),
        ErrorKind::InvalidArgument => errors::InvalidArgument::new_err(msg),
        ErrorKind::Busy => errors::Busy::new_err(msg),
        ErrorKind::NotFound => errors::NotFound::new_err(msg),
        ErrorKind::Unavailable => errors::Unavailable::new_err(msg),
        // A kind the engine may add later: the base class, which every handler catches.
        _ => errors::Error::new_err(msg),
    }
}

/// Extracts option `name`, naming it in the error.
fn opt<'py, T>(v: &Bound<'py, PyAny>, name: &str) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    v.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        PyValueError::new_err(format!("option {name}: {e}"))
    })
}

fn string_opt(v: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    Ok(opt::<String>(v, name)?.to_ascii_lowercase())
}

fn compression(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Compression> {
    if v.is_none() {
        return Ok(Compression::None);
    }
    match string_opt(v, name)?.as_str() {
        "none" => Ok(Compression::None),
        "snappy" => Ok(Compression::Snappy),
        "lz4" => Ok(Compression::Lz4),
        "zstd" => Ok(Compression::Zstd),
        other => Err(PyValueError::new_err(format!(
            "option {name}: unknown compression '{other}' (none, snappy, lz4 or zstd)"
        ))),
    }
}

/// `compression_per_level=`: a list of compression names, level 0 first (empty or None:
/// `compression` everywhere).
fn compression_per_level(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<Compression>> {
    if v.is_none() {
        return Ok(Vec::new());
    }
    if v.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "option {name} must be a list of compression names, one per level, not one str"
        )));
    }
    let items = v.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "option {name} must be a list of compression names, one per level"
        ))
    })?;
    items
        .enumerate()
        .map(|(i, item)| compression(&item?, &format!("{name}[{i}]")))
        .collect()
}

/// `compression_opts=` and `bottommost_compression_opts=`: a dict of `level`,
/// `max_dict_bytes` and `zstd_max_train_bytes` (RocksDB's `CompressionOptions` fields), each
/// over `base`; a key not among them is a `TypeError` naming it.
fn compression_options(
    v: &Bound<'_, PyAny>,
    name: &str,
    base: CompressionOptions,
) -> PyResult<CompressionOptions> {
    let dict = v.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "option {name} must be a dict of level, max_dict_bytes and zstd_max_train_bytes, \
             not {}",
            v.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        ))
    })?;
    let mut o = base;
    for (k, v) in dict.iter() {
        let field: String = k.extract()?;
        let full = format!("{name}.{field}");
        match field.as_str() {
            "level" => o.level = opt(&v, &full)?,
            "max_dict_bytes" => o.max_dict_bytes = opt(&v, &full)?,
            "zstd_max_train_bytes" => o.zstd_max_train_bytes = opt(&v, &full)?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "option {name}: unknown field '{field}' (level, max_dict_bytes or \
                     zstd_max_train_bytes)"
                )))
            }
        }
    }
    Ok(o)
}

/// `checksum=`: `"crc32c"` or `"xxh3"`.
fn checksum(v: &Bound<'_, PyAny>, name: &str) -> PyResult<ChecksumType> {
    let text = string_opt(v, name)?;
    ChecksumType::from_name(&text).ok_or_else(|| {
        PyValueError::new_err(format!(
            "option {name}: unknown checksum '{text}' (crc32c or xxh3)"
        ))
    })
}

fn compaction_style(v: &Bound<'_, PyAny>, name: &str) -> PyResult<CompactionStyle> {
    match string_opt(v, name)?.as_str() {
        "leveled" | "level" => Ok(CompactionStyle::Leveled),
        "universal" => Ok(CompactionStyle::Universal),
        other => Err(PyValueError::new_err(format!(
            "option {name}: unknown compaction style '{other}' (leveled or universal)"
        ))),
    }
}

fn index_type(v: &Bound<'_, PyAny>, name: &str) -> PyResult<IndexType> {
    let text = string_opt(v, name)?;
    IndexType::from_name(&text).ok_or_else(|| {
        PyValueError::new_err(format!(
            "option {name}: unknown index type '{text}' (binary_search or two_level_index_search)"
        ))
    })
}

fn prepopulate_block_cache(v: &Bound<'_, PyAny>, name: &str) -> PyResult<PrepopulateBlockCache> {
    let text = string_opt(v, name)?;
    PrepopulateBlockCache::from_name(&text).ok_or_else(|| {
        PyValueError::new_err(format!(
            "option {name}: unknown setting '{text}' (disable or flush_only)"
        ))
    })
}

fn data_block_index_type(v: &Bound<'_, PyAny>, name: &str) -> PyResult<DataBlockIndexType> {
    let text = string_opt(v, name)?;
    DataBlockIndexType::from_name(&text).ok_or_else(|| {
        PyValueError::new_err(format!(
            "option {name}: unknown data block index type '{text}' (binary_search or \
             binary_and_hash)"
        ))
    })
}

fn merge_operator(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Arc<dyn MergeOperator>>> {
    if v.is_none() {
        return Ok(None);
    }
    if v.cast::<PyString>().is_err() {
        // A Python operator: a callable, or an object with full_merge (see callbacks.rs).
        return Ok(Some(Arc::new(PyMergeOperator::from_py(v, name)?)));
    }
    match string_opt(v, name)?.as_str() {
        "uint64add" => Ok(Some(Arc::new(UInt64Add))),
        // RocksDB's stringappend joins with ',' by default.
        "stringappend" => Ok(Some(Arc::new(StringAppend::new(b",")))),
        other => Err(PyValueError::new_err(format!(
            "option {name}: unknown merge operator '{other}' (uint64add, stringappend or None)"
        ))),
    }
}

/// `compaction_filter=`: None, or a callable (see callbacks.rs).
fn compaction_filter(
    v: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Option<Arc<dyn CompactionFilter>>> {
    if v.is_none() {
        return Ok(None);
    }
    Ok(Some(Arc::new(PyCompactionFilter::from_py(v, name)?)))
}

/// `prefix_extractor=`: None, `"fixed:N"` or `"capped:N"`.
fn prefix_extractor(
    v: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Option<Arc<dyn PrefixExtractor>>> {
    if v.is_none() {
        return Ok(None);
    }
    let spec = string_opt(v, name)?;
    strata::parse_prefix_extractor(&spec)
        .map(Some)
        .map_err(|e| PyValueError::new_err(format!("option {name}: {e}")))
}

/// `comparator=`: None or "bytewise", "reverse_bytewise", or a callable (see callbacks.rs).
fn comparator(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Arc<dyn Comparator>> {
    if v.is_none() {
        return Ok(Arc::new(BytewiseComparator));
    }
    if v.cast::<PyString>().is_ok() {
        return match string_opt(v, name)?.as_str() {
            "bytewise" => Ok(Arc::new(BytewiseComparator)),
            "reverse_bytewise" => Ok(Arc::new(ReverseBytewiseComparator)),
            other => Err(PyValueError::new_err(format!(
                "option {name}: unknown comparator '{other}' (bytewise, reverse_bytewise, None \
                 or a callable)"
            ))),
        };
    }
    Ok(Arc::new(PyComparator::from_py(v, name)?))
}

/// `listeners=`: a list of callables (see callbacks.rs).
fn listeners(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<Arc<dyn EventListener>>> {
    if v.is_none() {
        return Ok(Vec::new());
    }
    let mut out: Vec<Arc<dyn EventListener>> = Vec::new();
    for item in v.try_iter()? {
        out.push(Arc::new(PyListener::from_py(&item?, name)?));
    }
    Ok(out)
}

/// `ttl=`: None or 0 (no TTL), or seconds after which values expire.
fn ttl(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Duration>> {
    if v.is_none() {
        return Ok(None);
    }
    let d = seconds(v, name)?;
    Ok((!d.is_zero()).then_some(d))
}

/// Sets the column family option `$name` of `$target` (an `Options` or a `CfOptions`: the
/// fields have the same names) from `$v`; evaluates to false for a name that is not one.
macro_rules! set_family_option {
    ($target:expr, $name:expr, $v:expr) => {{
        let (t, n, v) = ($target, $name, $v);
        match n {
            "write_buffer_size" => t.write_buffer_size = opt(v, n)?,
            "max_write_buffer_number" => t.max_write_buffer_number = opt(v, n)?,
            "memtable_prefix_bloom_size_ratio" => t.memtable_prefix_bloom_size_ratio = opt(v, n)?,
            "memtable_point_index_ratio" => t.memtable_point_index_ratio = opt(v, n)?,
            "memtable_whole_key_filtering" => t.memtable_whole_key_filtering = opt(v, n)?,
            "block_size" => t.block_size = opt(v, n)?,
            "block_size_deviation" => t.block_size_deviation = opt(v, n)?,
            "block_restart_interval" => t.block_restart_interval = opt(v, n)?,
            "bloom_bits_per_key" => t.bloom_bits_per_key = opt(v, n)?,
            "index_type" => t.index_type = index_type(v, n)?,
            "partition_filters" => t.partition_filters = opt(v, n)?,
            "metadata_block_size" => t.metadata_block_size = opt(v, n)?,
            "data_block_index_type" => t.data_block_index_type = data_block_index_type(v, n)?,
            "data_block_hash_table_util_ratio" => t.data_block_hash_table_util_ratio = opt(v, n)?,
            "compression" => t.compression = compression(v, n)?,
            "bottommost_compression" => {
                t.bottommost_compression = if v.is_none() {
                    None
                } else {
                    Some(compression(v, n)?)
                }
            }
            "compression_per_level" => t.compression_per_level = compression_per_level(v, n)?,
            "compression_opts" => {
                t.compression_opts = compression_options(v, n, t.compression_opts)?
            }
            "bottommost_compression_opts" => {
                t.bottommost_compression_opts = if v.is_none() {
                    None
                } else {
                    let base = t.bottommost_compression_opts.unwrap_or_default();
                    Some(compression_options(v, n, base)?)
                }
            }
            "checksum" => t.checksum = checksum(v, n)?,
            "level0_file_num_compaction_trigger" => {
                t.level0_file_num_compaction_trigger = opt(v, n)?
            }
            "level0_slowdown_writes_trigger" => t.level0_slowdown_writes_trigger = opt(v, n)?,
            "level0_stop_writes_trigger" => t.level0_stop_writes_trigger = opt(v, n)?,
            "max_bytes_for_level_base" => t.max_bytes_for_level_base = opt(v, n)?,
            "max_bytes_for_level_multiplier" => t.max_bytes_for_level_multiplier = opt(v, n)?,
            "num_levels" => t.num_levels = opt(v, n)?,
            "target_file_size_base" => t.target_file_size_base = opt(v, n)?,
            "disable_auto_compactions" => t.disable_auto_compactions = opt(v, n)?,
            "read_triggered_compaction" => t.read_triggered_compaction = opt(v, n)?,
            "compaction_style" => t.compaction_style = compaction_style(v, n)?,
            "max_subcompactions" => t.max_subcompactions = opt(v, n)?,
            "max_compaction_bytes" => t.max_compaction_bytes = opt(v, n)?,
            "soft_pending_compaction_bytes_limit" => {
                t.soft_pending_compaction_bytes_limit = opt(v, n)?
            }
            "hard_pending_compaction_bytes_limit" => {
                t.hard_pending_compaction_bytes_limit = opt(v, n)?
            }
            "merge_operator" => t.merge_operator = merge_operator(v, n)?,
            "compaction_filter" => t.compaction_filter = compaction_filter(v, n)?,
            "prefix_extractor" => t.prefix_extractor = prefix_extractor(v, n)?,
            "ttl" => t.ttl = ttl(v, n)?,
            "comparator" => t.comparator = comparator(v, n)?,
            "universal_size_ratio" => t.universal.size_ratio = opt(v, n)?,
            "universal_min_merge_width" => t.universal.min_merge_width = opt(v, n)?,
            "universal_max_merge_width" => t.universal.max_merge_width = opt(v, n)?,
            "universal_max_size_amplification_percent" => {
                t.universal.max_size_amplification_percent = opt(v, n)?
            }
            "enable_blob_files" => t.enable_blob_files = opt(v, n)?,
            "min_blob_size" => t.min_blob_size = opt(v, n)?,
            "blob_file_size" => t.blob_file_size = opt(v, n)?,
            "blob_separation_at_write" => t.blob_separation_at_write = opt(v, n)?,
            "enable_blob_garbage_collection" => t.enable_blob_garbage_collection = opt(v, n)?,
            "blob_garbage_collection_age_cutoff" => {
                t.blob_garbage_collection_age_cutoff = opt(v, n)?
            }
            "blob_garbage_collection_force_threshold" => {
                t.blob_garbage_collection_force_threshold = opt(v, n)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }};
}

fn set_family(cf: &mut CfOptions, name: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    set_family_option!(cf, name, v)
}

fn set_db_family(o: &mut Options, name: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    set_family_option!(o, name, v)
}

fn unknown(name: &str) -> PyErr {
    PyTypeError::new_err(format!("unknown option '{name}'"))
}

/// What `strata.open` was given, turned into the engine's options.
pub struct OpenOptions {
    pub options: Options,
    pub read_only: bool,
    /// `transaction_db=True`: pessimistic transactions, with these defaults for each.
    pub transactions: Option<TransactionOptions>,
}

/// A duration in seconds (an int or a float), named `name` in errors: finite and not negative.
pub fn seconds(v: &Bound<'_, PyAny>, name: &str) -> PyResult<Duration> {
    let secs: f64 = v.extract().map_err(|_| {
        let type_name = v
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        PyTypeError::new_err(format!(
            "{name} must be a number of seconds, not {type_name}"
        ))
    })?;
    Duration::try_from_secs_f64(secs).map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be a finite, non-negative number of seconds, not {secs}"
        ))
    })
}

/// Parses the keyword options of `strata.open`. Unlike the engine, `create_if_missing` and
/// `create_missing_column_families` default to true: opening a path in Python usually means
/// "use this directory", as with `shelve` or `dbm`'s "c" flag.
pub fn open_options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<OpenOptions> {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    let mut read_only = false;
    let mut transaction_db = false;
    let mut lock_timeout = None;
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            let name: String = k.extract()?;
            let n = name.as_str();
            let o = &mut options;
            match n {
                "read_only" => read_only = opt(&v, n)?,
                "transaction_db" => transaction_db = opt(&v, n)?,
                "lock_timeout" => lock_timeout = Some(seconds(&v, n)?),
                "create_if_missing" => o.create_if_missing = opt(&v, n)?,
                "error_if_exists" => o.error_if_exists = opt(&v, n)?,
                "create_missing_column_families" => o.create_missing_column_families = opt(&v, n)?,
                "max_write_group_bytes" => o.max_write_group_bytes = opt(&v, n)?,
                "block_cache_size" => o.block_cache_size = opt(&v, n)?,
                "cache_index_and_filter_blocks" => o.cache_index_and_filter_blocks = opt(&v, n)?,
                "pin_top_level_index_and_filter" => o.pin_top_level_index_and_filter = opt(&v, n)?,
                "prepopulate_block_cache" => {
                    o.prepopulate_block_cache = prepopulate_block_cache(&v, n)?
                }
                "warm_compaction_outputs" => o.warm_compaction_outputs = opt(&v, n)?,
                "uncache_aggressiveness" => o.uncache_aggressiveness = opt(&v, n)?,
                "pin_l0_filter_and_index_blocks_in_cache" => {
                    o.pin_l0_filter_and_index_blocks_in_cache = opt(&v, n)?
                }
                "max_open_files" => {
                    // -1, as in RocksDB: every table stays open once read.
                    let files: i64 = opt(&v, n)?;
                    o.max_open_files =
                        usize::try_from(files).unwrap_or(Options::UNLIMITED_OPEN_FILES)
                }
                "use_direct_reads" => o.use_direct_reads = opt(&v, n)?,
                "use_direct_io_for_flush_and_compaction" => {
                    o.use_direct_io_for_flush_and_compaction = opt(&v, n)?
                }
                "compaction_readahead_size" => o.compaction_readahead_size = opt(&v, n)?,
                "allow_mmap_reads" => o.allow_mmap_reads = opt(&v, n)?,
                "manual_wal_flush" => o.manual_wal_flush = opt(&v, n)?,
                "wal_compression" => o.wal_compression = compression(&v, n)?,
                "max_log_file_size" => o.max_log_file_size = opt(&v, n)?,
                "keep_log_file_num" => o.keep_log_file_num = opt(&v, n)?,
                "wal_ttl_seconds" => o.wal_ttl_seconds = opt(&v, n)?,
                "wal_size_limit_mb" => o.wal_size_limit_mb = opt(&v, n)?,
                "max_background_jobs" => o.max_background_jobs = opt(&v, n)?,
                "allow_ingest_behind" => o.allow_ingest_behind = opt(&v, n)?,
                "listeners" => o.listeners = listeners(&v, n)?,
                "wal_recovery_mode" => {
                    o.wal_recovery_mode = match string_opt(&v, n)?.as_str() {
                        "tolerate_corrupted_tail" => WalRecoveryMode::TolerateCorruptedTail,
                        "point_in_time" => WalRecoveryMode::PointInTime,
                        other => {
                            return Err(PyValueError::new_err(format!(
                                "option {n}: unknown mode '{other}' \
                                 (tolerate_corrupted_tail or point_in_time)"
                            )))
                        }
                    }
                }
                _ => {
                    if !set_db_family(o, n, &v)? {
                        return Err(unknown(n));
                    }
                }
            }
        }
    }
    if transaction_db && read_only {
        return Err(PyValueError::new_err(
            "transaction_db=True and read_only=True cannot be combined: a read-only database \
             has no transactions",
        ));
    }
    if lock_timeout.is_some() && !transaction_db {
        return Err(PyValueError::new_err(
            "option lock_timeout needs transaction_db=True: only pessimistic transactions \
             take locks",
        ));
    }
    let transactions = transaction_db.then(|| {
        let mut transactions = TransactionOptions::default();
        if let Some(timeout) = lock_timeout {
            transactions.lock_timeout = timeout;
        }
        transactions
    });
    Ok(OpenOptions {
        options,
        read_only,
        transactions,
    })
}

/// Parses column family options given as keywords or a dict, over `base`.
pub fn cf_options(base: &CfOptions, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<CfOptions> {
    let mut cf = base.clone();
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            let name: String = k.extract()?;
            if !set_family(&mut cf, &name, &v)? {
                return Err(unknown(&name));
            }
        }
    }
    Ok(cf)
}
