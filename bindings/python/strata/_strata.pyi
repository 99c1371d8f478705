"""Type stubs of the compiled module strata._strata (re-exported by strata)."""

import os
import pathlib
from types import TracebackType
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator as _Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    TypedDict,
    Union,
    overload,
)

_Bytes = Union[bytes, bytearray, memoryview]
_T = TypeVar("_T")
_Family = Union["ColumnFamily", str]
_MergeFunction = Callable[[bytes, Optional[bytes], List[bytes]], bytes]
_CompactionFilter = Callable[[int, bytes, bytes, bool], Union[None, bool, bytes]]
_OptionValue = Union[int, float, bool, str, None, _MergeFunction, _CompactionFilter, object]

class _BackupInfo(TypedDict):
    id: int
    timestamp: int
    num_files: int
    size: int
    shared_bytes: int
    copied_bytes: int

class _SstFileInfo(TypedDict):
    path: str
    smallest_key: Optional[bytes]
    largest_key: Optional[bytes]
    entries: int
    range_deletions: int
    file_size: int

FORMAT_VERSION: int

class Error(Exception):
    """Base class of the errors the engine reports."""

class NotFound(Error):
    """A database, file or column family that must exist does not."""

class Corruption(Error):
    """Data on disk failed a checksum or could not be decoded, or a merge failed."""

class InvalidArgument(Error):
    """An argument or option the engine cannot accept; the message names it."""

class Busy(Error):
    """The database is locked by another process or handle, or a TransactionError."""

class Unavailable(Error):
    """The database refuses the call: closed, read-only, or stopped by an error."""

class IOError(Error):
    """The operating system reported an IO error; the message names the file."""

class TransactionError(Busy):
    """A transaction could not go on; the base of the four classes below."""

class TransactionConflict(TransactionError):
    """A key the transaction wrote or read for update was written by someone else since its
    snapshot (an optimistic commit: nothing was written)."""

class Deadlock(TransactionError):
    """Waiting for a key's lock would close a cycle of waiting pessimistic transactions."""

class LockTimeout(TransactionError):
    """A pessimistic transaction waited for a key's lock longer than its lock_timeout."""

class TransactionExpired(TransactionError):
    """A pessimistic transaction outlived its expiration and lost its locks: its commit
    wrote nothing."""

def open(
    path: Union[str, os.PathLike[str]],
    *,
    column_families: Optional[Dict[str, Optional[Dict[str, _OptionValue]]]] = None,
    read_only: bool = False,
    create_if_missing: bool = True,
    error_if_exists: bool = False,
    create_missing_column_families: bool = True,
    write_buffer_size: int = ...,
    max_write_buffer_number: int = ...,
    memtable_prefix_bloom_size_ratio: float = ...,
    memtable_point_index_ratio: float = 0.125,
    memtable_whole_key_filtering: bool = True,
    block_size: int = ...,
    block_size_deviation: int = 10,
    block_restart_interval: int = ...,
    bloom_bits_per_key: int = ...,
    compression: Optional[str] = "none",
    bottommost_compression: Optional[str] = None,
    compression_per_level: Optional[Sequence[Optional[str]]] = None,
    compression_opts: Optional[Dict[str, int]] = None,
    bottommost_compression_opts: Optional[Dict[str, int]] = None,
    checksum: str = "crc32c",
    allow_ingest_behind: bool = False,
    block_cache_size: int = ...,
    cache_index_and_filter_blocks: bool = False,
    index_type: str = "binary_search",
    partition_filters: bool = False,
    metadata_block_size: int = 4096,
    pin_top_level_index_and_filter: bool = True,
    data_block_index_type: str = "binary_search",
    data_block_hash_table_util_ratio: float = 0.75,
    pin_l0_filter_and_index_blocks_in_cache: bool = False,
    prepopulate_block_cache: str = "disable",
    warm_compaction_outputs: bool = True,
    uncache_aggressiveness: int = 300,
    max_open_files: int = ...,
    use_direct_reads: bool = False,
    use_direct_io_for_flush_and_compaction: bool = False,
    compaction_readahead_size: int = ...,
    allow_mmap_reads: bool = False,
    manual_wal_flush: bool = False,
    wal_compression: str = "none",
    max_log_file_size: int = ...,
    keep_log_file_num: int = ...,
    level0_file_num_compaction_trigger: int = ...,
    level0_slowdown_writes_trigger: int = ...,
    level0_stop_writes_trigger: int = ...,
    max_bytes_for_level_base: int = ...,
    max_bytes_for_level_multiplier: float = ...,
    num_levels: int = ...,
    target_file_size_base: int = ...,
    disable_auto_compactions: bool = False,
    read_triggered_compaction: bool = True,
    compaction_style: str = "leveled",
    universal_size_ratio: int = 1,
    universal_min_merge_width: int = 2,
    universal_max_merge_width: int = ...,
    universal_max_size_amplification_percent: int = 200,
    max_background_jobs: int = ...,
    max_subcompactions: int = ...,
    max_compaction_bytes: int = ...,
    soft_pending_compaction_bytes_limit: int = ...,
    hard_pending_compaction_bytes_limit: int = ...,
    enable_blob_files: bool = False,
    min_blob_size: int = 0,
    blob_file_size: int = ...,
    blob_separation_at_write: bool = ...,
    enable_blob_garbage_collection: bool = False,
    blob_garbage_collection_age_cutoff: float = 0.25,
    blob_garbage_collection_force_threshold: float = 1.0,
    max_write_group_bytes: int = ...,
    wal_recovery_mode: str = "tolerate_corrupted_tail",
    merge_operator: Union[str, _MergeFunction, object, None] = None,
    compaction_filter: Optional[_CompactionFilter] = None,
    prefix_extractor: Optional[str] = None,
    ttl: Optional[float] = None,
    comparator: Union[str, Callable[[bytes, bytes], int], None] = None,
    listeners: Optional[Iterable[Callable[[Dict[str, object]], None]]] = None,
    transaction_db: bool = False,
    lock_timeout: Optional[float] = None,
) -> Db:
    """Opens (by default creating) the database in directory `path`."""

def open_as_secondary(
    path: Union[str, os.PathLike[str]],
    secondary_path: Union[str, os.PathLike[str]],
    **options: _OptionValue,
) -> Db:
    """Opens a read-only secondary instance following the database in `path`."""

def list_column_families(path: Union[str, os.PathLike[str]]) -> List[str]:
    """The column family names of the database in `path`, "default" first."""

def repair(path: Union[str, os.PathLike[str]], **options: _OptionValue) -> bool:
    """Rebuilds the manifest of the closed database in `path`; True if nothing was lost."""

class Iterator:
    """A lazy iterator over a key range, reading as of the moment it was made."""

    def __iter__(self) -> Iterator: ...
    def __next__(self) -> Union[bytes, Tuple[bytes, bytes]]: ...
    def refresh(self) -> None:
        """Moves to the database as it is now and starts again from the range's start."""

class _Reads:
    def __getitem__(self, key: _Bytes) -> bytes: ...
    def __contains__(self, key: _Bytes) -> bool: ...
    def __iter__(self) -> _Iterator[bytes]: ...
    @overload
    def get(
        self, key: _Bytes, *, fill_cache: bool = True, verify_checksums: bool = True
    ) -> Optional[bytes]: ...
    @overload
    def get(
        self,
        key: _Bytes,
        default: _T,
        *,
        fill_cache: bool = True,
        verify_checksums: bool = True,
    ) -> Union[bytes, _T]: ...
    @overload
    def multi_get(
        self, keys: Iterable[_Bytes], *, fill_cache: bool = True, verify_checksums: bool = True
    ) -> List[Optional[bytes]]: ...
    @overload
    def multi_get(
        self,
        keys: Iterable[_Bytes],
        default: _T,
        *,
        fill_cache: bool = True,
        verify_checksums: bool = True,
    ) -> List[Union[bytes, _T]]: ...
    def items(
        self, start: Optional[_Bytes] = None, end: Optional[_Bytes] = None, reverse: bool = False
    ) -> _Iterator[Tuple[bytes, bytes]]: ...
    def keys(
        self, start: Optional[_Bytes] = None, end: Optional[_Bytes] = None, reverse: bool = False
    ) -> _Iterator[bytes]: ...
    def values(
        self, start: Optional[_Bytes] = None, end: Optional[_Bytes] = None, reverse: bool = False
    ) -> _Iterator[bytes]: ...

class _Writes(_Reads):
    def items(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        reverse: bool = False,
        *,
        prefix_same_as_start: bool = False,
        total_order_seek: bool = False,
        fill_cache: bool = True,
        verify_checksums: bool = True,
    ) -> _Iterator[Tuple[bytes, bytes]]: ...
    def keys(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        reverse: bool = False,
        *,
        prefix_same_as_start: bool = False,
        total_order_seek: bool = False,
        fill_cache: bool = True,
        verify_checksums: bool = True,
    ) -> _Iterator[bytes]: ...
    def values(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        reverse: bool = False,
        *,
        prefix_same_as_start: bool = False,
        total_order_seek: bool = False,
        fill_cache: bool = True,
        verify_checksums: bool = True,
    ) -> _Iterator[bytes]: ...
    def __setitem__(self, key: _Bytes, value: _Bytes) -> None: ...
    def __delitem__(self, key: _Bytes) -> None: ...
    def put(self, key: _Bytes, value: _Bytes, *, sync: bool = False) -> None: ...
    def delete(self, key: _Bytes, *, sync: bool = False) -> None: ...
    def single_delete(self, key: _Bytes, *, sync: bool = False) -> None: ...
    def delete_range(self, begin: _Bytes, end: _Bytes, *, sync: bool = False) -> None: ...
    def merge(self, key: _Bytes, operand: _Bytes, *, sync: bool = False) -> None: ...
    def write_batch(self) -> WriteBatch: ...
    def snapshot(self) -> Snapshot: ...
    def flush(self) -> None: ...
    def compact_range(
        self, start: Optional[_Bytes] = None, end: Optional[_Bytes] = None
    ) -> None: ...
    def property(self, name: str) -> Optional[str]: ...
    def stats(self) -> str: ...

class Db(_Writes):
    """An open database: a mapping from bytes to bytes in key order (no len())."""

    @property
    def path(self) -> pathlib.Path: ...
    @property
    def closed(self) -> bool: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def secondary_path(self) -> Optional[pathlib.Path]: ...
    def try_catch_up_with_primary(self) -> None: ...
    def latest_sequence_number(self) -> int: ...
    def updates_since(self, seq: int) -> UpdatesIterator: ...
    def live_files_metadata(
        self, *, column_family: Optional[_Family] = None
    ) -> List[Dict[str, Any]]: ...
    def approximate_sizes(
        self,
        ranges: Iterable[Tuple[_Bytes, _Bytes]],
        *,
        column_family: Optional[_Family] = None,
    ) -> List[int]: ...
    def delete_files_in_range(
        self,
        begin: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        *,
        column_family: Optional[_Family] = None,
    ) -> List[str]: ...
    @property
    def transaction_db(self) -> bool: ...
    def transaction(
        self,
        *,
        sync: bool = False,
        lock_timeout: Optional[float] = None,
        deadlock_detect: Optional[bool] = None,
        expiration: Optional[float] = None,
        set_snapshot: Optional[bool] = None,
    ) -> Transaction: ...
    def create_column_family(self, name: str, **options: _OptionValue) -> ColumnFamily: ...
    def drop_column_family(self, name: str) -> None: ...
    def column_families(self) -> List[str]: ...
    def column_family(self, name: str) -> ColumnFamily: ...
    def sync_wal(self) -> None: ...
    def flush_wal(self, sync: bool = False) -> None: ...
    def statistics(self) -> Dict[str, int]: ...
    def compact_level(self, level: int) -> None: ...
    def compact_all(self) -> None: ...
    def wait_for_compactions(self) -> None: ...
    def tree_shape(self) -> str: ...
    def put_with_ttl(self, key: _Bytes, value: _Bytes, ttl: float) -> None: ...
    def resume(self) -> None: ...
    def reset_statistics(self) -> None: ...
    def checkpoint(
        self, path: Union[str, os.PathLike[str]], *, log_size_for_flush: int = 0
    ) -> None: ...
    def ingest(
        self,
        paths: Iterable[Union[str, os.PathLike[str]]],
        *,
        move_files: bool = False,
        allow_blocking_flush: bool = True,
        column_family: Optional[_Family] = None,
        ingest_behind: bool = False,
    ) -> None: ...
    def prepared_transactions(self) -> List[Transaction]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Db: ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

class ColumnFamily(_Writes):
    """A named keyspace of a database, with the mapping API of Db."""

    @property
    def name(self) -> str: ...
    @property
    def id(self) -> int: ...
    @property
    def dropped(self) -> bool: ...

class Snapshot(_Reads):
    """A read-only view of the database as of one moment."""

    @property
    def sequence(self) -> int: ...
    def column_family(self, name: str) -> Snapshot: ...
    def close(self) -> None: ...
    def __enter__(self) -> Snapshot: ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

class UpdatesIterator:
    """The change feed from Db.updates_since(seq): (seq, batch) pairs, oldest first."""

    def __iter__(self) -> UpdatesIterator: ...
    def __next__(self) -> Tuple[int, WriteBatch]: ...

class WriteBatch:
    """Writes applied atomically by write(), or on leaving a with block without an exception."""

    def put(self, key: _Bytes, value: _Bytes, column_family: Optional[_Family] = None) -> None: ...
    def delete(self, key: _Bytes, column_family: Optional[_Family] = None) -> None: ...
    def delete_range(
        self, begin: _Bytes, end: _Bytes, column_family: Optional[_Family] = None
    ) -> None: ...
    def merge(
        self, key: _Bytes, operand: _Bytes, column_family: Optional[_Family] = None
    ) -> None: ...
    def __setitem__(self, key: _Bytes, value: _Bytes) -> None: ...
    def __delitem__(self, key: _Bytes) -> None: ...
    def __len__(self) -> int: ...
    def write(self, *, sync: bool = False) -> None: ...
    def clear(self) -> None: ...
    def entries(self) -> List[Tuple[str, int, bytes, bytes]]: ...
    def log_data(self) -> List[bytes]: ...
    def __enter__(self) -> WriteBatch: ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

class Transaction:
    """An optimistic or pessimistic transaction from Db.transaction(): reads see its own
    writes; commit() applies them atomically, rollback() drops them."""

    @property
    def active(self) -> bool: ...
    @property
    def pessimistic(self) -> bool: ...
    @property
    def name(self) -> Optional[str]: ...
    def set_name(self, name: str) -> None: ...
    def prepare(self) -> None: ...
    def cursor(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        *,
        column_family: Optional[_Family] = None,
    ) -> TxnCursor: ...
    @overload
    def get(
        self, key: _Bytes, *, for_update: bool = False, column_family: Optional[_Family] = None
    ) -> Optional[bytes]: ...
    @overload
    def get(
        self,
        key: _Bytes,
        default: _T,
        *,
        for_update: bool = False,
        column_family: Optional[_Family] = None,
    ) -> Union[bytes, _T]: ...
    def __getitem__(self, key: _Bytes) -> bytes: ...
    def __contains__(self, key: _Bytes) -> bool: ...
    def put(self, key: _Bytes, value: _Bytes, column_family: Optional[_Family] = None) -> None: ...
    def delete(self, key: _Bytes, column_family: Optional[_Family] = None) -> None: ...
    def merge(
        self, key: _Bytes, operand: _Bytes, column_family: Optional[_Family] = None
    ) -> None: ...
    def __setitem__(self, key: _Bytes, value: _Bytes) -> None: ...
    def __delitem__(self, key: _Bytes) -> None: ...
    def items(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        reverse: bool = False,
        *,
        column_family: Optional[_Family] = None,
    ) -> _Iterator[Tuple[bytes, bytes]]: ...
    def keys(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        reverse: bool = False,
        *,
        column_family: Optional[_Family] = None,
    ) -> _Iterator[bytes]: ...
    def values(
        self,
        start: Optional[_Bytes] = None,
        end: Optional[_Bytes] = None,
        reverse: bool = False,
        *,
        column_family: Optional[_Family] = None,
    ) -> _Iterator[bytes]: ...
    def set_savepoint(self) -> None: ...
    def rollback_to_savepoint(self) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def __enter__(self) -> Transaction: ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

class SstWriter:
    """Writes a table file for Db.ingest(): keys in increasing order, then finish()."""

    def __init__(self, path: Union[str, os.PathLike[str]], **options: _OptionValue) -> None: ...
    def put(self, key: _Bytes, value: _Bytes) -> None: ...
    def merge(self, key: _Bytes, operand: _Bytes) -> None: ...
    def delete(self, key: _Bytes) -> None: ...
    def delete_range(self, begin: _Bytes, end: _Bytes) -> None: ...
    @property
    def file_size(self) -> int: ...
    def finish(self) -> _SstFileInfo: ...

class BackupEngine:
    """Incremental backups of databases in one directory, a crc32c per file."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None: ...
    def create_backup(self, db: Db) -> _BackupInfo: ...
    def list_backups(self) -> List[_BackupInfo]: ...
    def verify(self, id: int) -> None: ...
    def restore(self, id: int, path: Union[str, os.PathLike[str]]) -> None: ...
    def delete(self, id: int) -> None: ...
    def purge_old_backups(self, keep: int) -> List[int]: ...

class TxnCursor:
    """An updatable cursor of a transaction, from Transaction.cursor()."""

    def seek(self, key: _Bytes) -> None: ...
    def seek_for_prev(self, key: _Bytes) -> None: ...
    def seek_to_first(self) -> None: ...
    def seek_to_last(self) -> None: ...
    def next(self) -> None: ...
    def prev(self) -> None: ...
    @property
    def valid(self) -> bool: ...
    @property
    def key(self) -> bytes: ...
    @property
    def value(self) -> bytes: ...
    def update(self, value: _Bytes) -> None: ...
    def delete(self) -> None: ...
