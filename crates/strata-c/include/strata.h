/* Strata's C API. Generated from crates/strata-c/src by cbindgen: do not edit; run
   STRATA_C_HEADER=write cargo test -p strata-c --test header to regenerate.

   Ownership, for every function:
   - A handle from a *_create, *_open* or strata_create_* function is the caller's, released
     once with the matching *_destroy, strata_close, strata_release_snapshot or
     strata_iter_destroy. Release iterators, snapshots and column family handles before
     closing their database.
   - Bytes passed in are borrowed for the call only; a length of 0 allows a null pointer.
   - Bytes returned by value (strata_get, strata_property_value, error messages, family
     names) are malloc'd and the caller's: release them with strata_free (or free).
   - Bytes returned by reference (strata_iter_key, strata_iter_value) belong to the
     iterator, valid until it moves or is destroyed.
   - On failure *errptr gets a malloc'd message (one already there is freed first) and the
     function returns null, 0 or nothing; on success *errptr is left alone. errptr may be
     null.
   Handles may be shared between threads, except iterators and write batches. */

#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

// A handle of a column family of an open database.
typedef struct strata_column_family_t strata_column_family_t;

// A cursor over a database or one of its column families.
typedef struct strata_iterator_t strata_iterator_t;

// Options for opening a database and for new column families.
typedef struct strata_options_t strata_options_t;

// Options for reads and iterators: a snapshot and iteration bounds.
typedef struct strata_readoptions_t strata_readoptions_t;

// A snapshot of a database: reads through it ignore later writes.
typedef struct strata_snapshot_t strata_snapshot_t;

// An open database.
typedef struct strata_t strata_t;

// Updates applied together by `strata_write`.
typedef struct strata_writebatch_t strata_writebatch_t;

// Options for writes: sync, and skipping the WAL.
typedef struct strata_writeoptions_t strata_writeoptions_t;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// A new, empty batch.
strata_writebatch_t *strata_writebatch_create(void);

// Releases a batch.
//
// # Safety
// `b` must be null or a handle from `strata_writebatch_create`, released once.
void strata_writebatch_destroy(strata_writebatch_t *b);

// Removes every update.
//
// # Safety
// `b` null or a live batch.
void strata_writebatch_clear(strata_writebatch_t *b);

// The number of updates in the batch (0 for null).
//
// # Safety
// `b` null or a live batch.
size_t strata_writebatch_count(const strata_writebatch_t *b);

// Adds: set `key` to `value`. A key or value over Strata's limits makes the batch invalid:
// `strata_write` then refuses it with an error naming the limit.
//
// # Safety
// `b` null or a live batch; `key` and `value` readable for their lengths.
void strata_writebatch_put(strata_writebatch_t *b, const char *key, size_t klen, const char *value, size_t vlen);

// Adds: set `key` to `value` in column family `cf` (a null `cf` is ignored).
//
// # Safety
// As `strata_writebatch_put`; `cf` null or a live handle.
void strata_writebatch_put_cf(strata_writebatch_t *b, const strata_column_family_t *cf, const char *key, size_t klen, const char *value, size_t vlen);

// Adds: remove `key`.
//
// # Safety
// `b` null or a live batch; `key` readable for `klen`.
void strata_writebatch_delete(strata_writebatch_t *b, const char *key, size_t klen);

// Adds: remove `key` from column family `cf` (a null `cf` is ignored).
//
// # Safety
// As `strata_writebatch_delete`; `cf` null or a live handle.
void strata_writebatch_delete_cf(strata_writebatch_t *b, const strata_column_family_t *cf, const char *key, size_t klen);

// Adds: remove every key in [`begin`, `end`) (one range tombstone, whatever the number of
// keys). `begin` after `end` makes the batch invalid: `strata_write` refuses it naming both.
//
// # Safety
// `b` null or a live batch; `begin` and `end` readable for their lengths.
void strata_writebatch_delete_range(strata_writebatch_t *b, const char *begin, size_t begin_len, const char *end, size_t end_len);

// Adds: remove every key in [`begin`, `end`) of column family `cf` (a null `cf` is ignored).
//
// # Safety
// As `strata_writebatch_delete_range`; `cf` null or a live handle.
void strata_writebatch_delete_range_cf(strata_writebatch_t *b, const strata_column_family_t *cf, const char *begin, size_t begin_len, const char *end, size_t end_len);

// Adds: remove the single put of `key` (the caller promises `key` was put at most once
// since it was last deleted).
//
// # Safety
// `b` null or a live batch; `key` readable for `klen`.
void strata_writebatch_single_delete(strata_writebatch_t *b, const char *key, size_t klen);

// Opens the database in `name` with its column families: `num_column_families` names and
// options (the family fields of each `strata_options_t` are used), every family the
// database has among them. On success `column_family_handles[i]` is the handle of family
// `i`; on failure null is returned, `*errptr` says why (listing the families not named, if
// that is it) and no handle is written.
//
// # Safety
// `options` live; `name` a NUL-terminated path; the two arrays hold `num_column_families`
// valid entries and `column_family_handles` has room for as many; `errptr` as usual.
strata_t *strata_open_column_families(const strata_options_t *options, const char *name, int num_column_families, const char *const *column_family_names, const strata_options_t *const *column_family_options, strata_column_family_t **column_family_handles, char **errptr);

// The names of the column families of the database in `name` (the default first), as a
// malloc'd array of `*lencf` malloc'd strings: release it with
// `strata_list_column_families_destroy`. Null and `*errptr` set on failure.
//
// # Safety
// `options` live; `name` a NUL-terminated path; `lencf` a valid pointer; `errptr` as usual.
char **strata_list_column_families(const strata_options_t *options, const char *name, size_t *lencf, char **errptr);

// Releases what `strata_list_column_families` returned.
//
// # Safety
// `list` null or from `strata_list_column_families` with its `len`, released once.
void strata_list_column_families_destroy(char **list, size_t len);

// Creates column family `name` with the family fields of `options`; its handle, or null
// and `*errptr` set (a family of that name exists, a bad name or option).
//
// # Safety
// Live `db` and `options`; `name` a NUL-terminated string; `errptr` as usual.
strata_column_family_t *strata_create_column_family(strata_t *db, const strata_options_t *options, const char *name, char **errptr);

// Drops column family `cf` (its handle stays to be released).
//
// # Safety
// Live `db` and `cf`; `errptr` as usual.
void strata_drop_column_family(strata_t *db, const strata_column_family_t *cf, char **errptr);

// The handle of column family `name`, or null if the database has none of that name.
//
// # Safety
// Live `db`; `name` a NUL-terminated string.
strata_column_family_t *strata_get_column_family(strata_t *db, const char *name);

// The family's name, malloc'd and NUL-terminated (release it with `strata_free`); null for
// a null handle.
//
// # Safety
// `cf` null or a live handle.
char *strata_column_family_name(const strata_column_family_t *cf);

// Releases a column family handle (the family itself stays).
//
// # Safety
// `cf` null or a handle from this library, released once.
void strata_column_family_handle_destroy(strata_column_family_t *cf);

// Sets `key` to `value` in column family `cf`.
//
// # Safety
// Live `db`, `options` and `cf`; `key` and `value` readable for their lengths; `errptr` as
// usual.
void strata_put_cf(strata_t *db, const strata_writeoptions_t *options, const strata_column_family_t *cf, const char *key, size_t keylen, const char *value, size_t vallen, char **errptr);

// Removes `key` from column family `cf`.
//
// # Safety
// Live `db`, `options` and `cf`; `key` readable for `keylen`; `errptr` as usual.
void strata_delete_cf(strata_t *db, const strata_writeoptions_t *options, const strata_column_family_t *cf, const char *key, size_t keylen, char **errptr);

// The value of `key` in column family `cf`, as `strata_get`.
//
// # Safety
// Live `db`, `options` and `cf`; `key` readable for `keylen`; `vallen` a valid pointer;
// `errptr` as usual.
char *strata_get_cf(strata_t *db, const strata_readoptions_t *options, const strata_column_family_t *cf, const char *key, size_t keylen, size_t *vallen, char **errptr);

// Writes the memtables of column family `cf` to tables and waits.
//
// # Safety
// Live `db` and `cf`; `errptr` as usual.
void strata_flush_cf(strata_t *db, const strata_column_family_t *cf, char **errptr);

// Compacts the keys in [start, limit] of column family `cf` (null bounds are open).
//
// # Safety
// Live `db` and `cf`; bounds null or readable for their lengths; `errptr` as usual.
void strata_compact_range_cf(strata_t *db, const strata_column_family_t *cf, const char *start, size_t start_len, const char *limit, size_t limit_len, char **errptr);

// The text of property `name` of column family `cf`; null for an unknown name or a dropped
// family.
//
// # Safety
// Live `db` and `cf`; `name` a NUL-terminated string.
char *strata_property_value_cf(strata_t *db, const strata_column_family_t *cf, const char *name);

// Opens (or, with `create_if_missing`, creates) the database in directory `name`. Null and
// `*errptr` set on failure.
//
// # Safety
// `options` a live handle, `name` a NUL-terminated path, `errptr` null or a valid `char**`.
strata_t *strata_open(const strata_options_t *options, const char *name, char **errptr);

// Opens the database in `name` for reading only: it writes nothing, takes no lock and sees
// the database as of the open (every column family, with the family fields of `options`).
//
// # Safety
// As `strata_open`.
strata_t *strata_open_for_read_only(const strata_options_t *options, const char *name, char **errptr);

// Closes the database (making the WAL durable) and releases the handle. Release its
// iterators, snapshots and column family handles first.
//
// # Safety
// `db` must be null or a handle from an open function, released once.
void strata_close(strata_t *db);

// Sets `key` to `value`.
//
// # Safety
// Live `db` and `options`; `key` and `value` readable for their lengths; `errptr` as usual.
void strata_put(strata_t *db, const strata_writeoptions_t *options, const char *key, size_t keylen, const char *value, size_t vallen, char **errptr);

// Removes `key`.
//
// # Safety
// As `strata_put`.
void strata_delete(strata_t *db, const strata_writeoptions_t *options, const char *key, size_t keylen, char **errptr);

// Removes every key in [`begin`, `end`) with one range tombstone; `begin` after `end` is an
// error naming both keys, and nothing is written.
//
// # Safety
// Live `db` and `options`; `begin` and `end` readable for their lengths; `errptr` as usual.
void strata_delete_range(strata_t *db, const strata_writeoptions_t *options, const char *begin, size_t begin_len, const char *end, size_t end_len, char **errptr);

// Applies the batch atomically (it stays the caller's, unchanged, and may be written again).
//
// # Safety
// Live `db`, `options` and `batch`; `errptr` as usual.
void strata_write(strata_t *db, const strata_writeoptions_t *options, const strata_writebatch_t *batch, char **errptr);

// The value of `key`, malloc'd (release it with `strata_free`), its length in `*vallen`;
// null with `*vallen` 0 when the key is absent or on an error (then `*errptr` is set).
//
// # Safety
// Live `db` and `options`; `key` readable for `keylen`; `vallen` a valid pointer; `errptr`
// as usual.
char *strata_get(strata_t *db, const strata_readoptions_t *options, const char *key, size_t keylen, size_t *vallen, char **errptr);

// A snapshot of the database now, for `strata_readoptions_set_snapshot`; release it with
// `strata_release_snapshot`. Null for a null `db`.
//
// # Safety
// `db` null or a live handle.
const strata_snapshot_t *strata_create_snapshot(strata_t *db);

// Releases a snapshot (read options that were given it keep it alive until they are
// destroyed or given another).
//
// # Safety
// `snapshot` null or from `strata_create_snapshot`, released once; `db` is not used.
void strata_release_snapshot(strata_t *_db, const strata_snapshot_t *snapshot);

// Writes the memtables of every column family to tables and waits (afterwards no WAL is
// needed to recover what was written).
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_flush(strata_t *db, char **errptr);

// Makes every write so far durable (fdatasync of the WAL).
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_sync_wal(strata_t *db, char **errptr);

// Compacts the keys in [start, limit] of the default family down to the last level; a null
// `start` or `limit` is an open bound.
//
// # Safety
// Live `db`; `start` and `limit` null or readable for their lengths; `errptr` as usual.
void strata_compact_range(strata_t *db, const char *start, size_t start_len, const char *limit, size_t limit_len, char **errptr);

// Waits until no flush is pending and no compaction is needed (0 or 1 for whether to wait;
// 0 returns at once).
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_wait_for_compactions(strata_t *db, unsigned char wait, char **errptr);

// The text of property `name` (as `Db::property`: `strata.stats`,
// `strata.num-files-at-level0`, ...), malloc'd and NUL-terminated; null for an unknown name.
//
// # Safety
// Live `db`; `name` a NUL-terminated string.
char *strata_property_value(strata_t *db, const char *name);

// Releases memory that Strata returned: values, property texts, error messages and names.
// Null is ignored.
//
// # Safety
// `ptr` must be null or a pointer this library returned for the caller to release, not yet
// released.
void strata_free(void *ptr);

// A cursor over the default family, unpositioned: seek it first. Null for a null handle.
//
// # Safety
// Live `db` and `options`.
strata_iterator_t *strata_create_iterator(strata_t *db, const strata_readoptions_t *options);

// A cursor over column family `cf`, unpositioned; null and `*errptr` set for a dropped
// family.
//
// # Safety
// Live `db`, `options` and `cf`; `errptr` as usual.
strata_iterator_t *strata_create_iterator_cf(strata_t *db, const strata_readoptions_t *options, const strata_column_family_t *cf, char **errptr);

// Releases an iterator.
//
// # Safety
// `it` null or from a `strata_create_iterator*` function, released once.
void strata_iter_destroy(strata_iterator_t *it);

// 1 if the iterator is at an entry, else 0.
//
// # Safety
// `it` null or a live iterator.
unsigned char strata_iter_valid(const strata_iterator_t *it);

// Moves to the first entry.
//
// # Safety
// `it` null or a live iterator.
void strata_iter_seek_to_first(strata_iterator_t *it);

// Moves to the last entry.
//
// # Safety
// `it` null or a live iterator.
void strata_iter_seek_to_last(strata_iterator_t *it);

// Moves to the first entry at or after `key`.
//
// # Safety
// `it` null or a live iterator; `key` readable for `klen`.
void strata_iter_seek(strata_iterator_t *it, const char *key, size_t klen);

// Moves to the last entry at or before `key`.
//
// # Safety
// `it` null or a live iterator; `key` readable for `klen`.
void strata_iter_seek_for_prev(strata_iterator_t *it, const char *key, size_t klen);

// Moves to the next entry (the iterator must be valid).
//
// # Safety
// `it` null or a live iterator.
void strata_iter_next(strata_iterator_t *it);

// Moves to the previous entry (the iterator must be valid).
//
// # Safety
// `it` null or a live iterator.
void strata_iter_prev(strata_iterator_t *it);

// The current key and its length in `*klen`, valid until the iterator moves; null with
// `*klen` 0 when the iterator is not valid.
//
// # Safety
// `it` null or a live iterator; `klen` a valid pointer.
const char *strata_iter_key(const strata_iterator_t *it, size_t *klen);

// The current value and its length in `*vlen`, valid until the iterator moves; null with
// `*vlen` 0 when the iterator is not valid.
//
// # Safety
// `it` null or a live iterator; `vlen` a valid pointer.
const char *strata_iter_value(const strata_iterator_t *it, size_t *vlen);

// Sets `*errptr` if the iterator stopped on an error (a corrupt or unreadable table).
//
// # Safety
// `it` null or a live iterator; `errptr` as usual.
void strata_iter_get_error(const strata_iterator_t *it, char **errptr);

// New options with Strata's defaults.
strata_options_t *strata_options_create(void);

// Releases options from `strata_options_create`.
//
// # Safety
// `opt` must be null or a handle from `strata_options_create`, released once.
void strata_options_destroy(strata_options_t *opt);

// Create the database if it does not exist (0 or 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_create_if_missing(strata_options_t *opt, unsigned char v);

// Fail to open if the database exists (0 or 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_error_if_exists(strata_options_t *opt, unsigned char v);

// Create the column families named to `strata_open_column_families` that do not exist yet
// (0 or 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_create_missing_column_families(strata_options_t *opt, unsigned char v);

// Bytes of a memtable before it is flushed (at least 4096).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_write_buffer_size(strata_options_t *opt, size_t v);

// Memtables (active and immutable) held before writes wait for a flush.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_max_write_buffer_number(strata_options_t *opt, int v);

// Each memtable's bloom filter over its keys, as a fraction of the write buffer size (0 to
// 0.25; 0 keeps none). Used with `memtable_whole_key_filtering`.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_memtable_prefix_bloom_size_ratio(strata_options_t *opt, double v);

// Put whole keys in the memtables' bloom filters, so that gets skip memtables without the key.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_memtable_whole_key_filtering(strata_options_t *opt, unsigned char v);

// Target size of table data blocks, in bytes.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_block_size(strata_options_t *opt, size_t v);

// How far short of the block size (percent, at most 100) a data block may be cut to keep
// its next entry from taking it past that size (`block_size_deviation`; 10 by default).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_block_size_deviation(strata_options_t *opt, uint32_t v);

// Bloom filter bits per key in tables; 0 builds no filters.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_bloom_bits_per_key(strata_options_t *opt, int v);

// Compression of table blocks, numbered as RocksDB's C API: 0 none, 1 snappy, 4 lz4,
// 7 zstd. Another number leaves the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_compression(strata_options_t *opt, int v);

// Key-value separation (RocksDB's `rocksdb_options_set_enable_blob_files`): values of at
// least the minimum blob size go to blob files, the tables keep references.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_enable_blob_files(strata_options_t *opt, unsigned char v);

// The smallest value kept in a blob file, in bytes.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_min_blob_size(strata_options_t *opt, uint64_t v);

// With blob files on, writes put large values straight into blob files and the WAL records
// their references, so that each value is written once.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_blob_separation_at_write(strata_options_t *opt, unsigned char v);

// Blob files are cut at this many bytes.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_blob_file_size(strata_options_t *opt, uint64_t v);

// Blob garbage collection: compactions move the live values out of the oldest blob files.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_enable_blob_garbage_collection(strata_options_t *opt, unsigned char v);

// The oldest fraction of the blob files garbage collection moves values out of (0 to 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_blob_garbage_collection_age_cutoff(strata_options_t *opt, double v);

// The garbage fraction of the oldest blob files at which the tables referring to the oldest
// one are compacted (0 to 1; 1 turns it off).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_blob_garbage_collection_force_threshold(strata_options_t *opt, double v);

// The layout of each table's index, numbered as RocksDB's C API
// (`rocksdb_block_based_options_set_index_type`): 0 one index block (binary search), 2
// index partitions under a top-level index (two-level index search). Another number
// leaves the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_index_type(strata_options_t *opt, int v);

// How a point lookup finds its entry in a data block, numbered as RocksDB's C API
// (`rocksdb_block_based_options_set_data_block_index_type`): 0 a binary search of the
// block's restart points, 1 a hash index of the block's user keys beside it (binary and
// hash; refused at open with an application's comparator). Another number leaves the
// setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_data_block_index_type(strata_options_t *opt, int v);

// With the data-block hash index, user keys per bucket of each data block's hash index
// (RocksDB's `rocksdb_block_based_options_set_data_block_hash_ratio`; 0.75 by default;
// above 0, or the open that uses it is refused).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_data_block_hash_table_util_ratio(strata_options_t *opt, double v);

// Cut each table's filter into partitions where its index partitions are cut (0 or 1);
// needs the two-level index, and the open that uses it is refused otherwise.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_partition_filters(strata_options_t *opt, unsigned char v);

// Target size of index and filter partitions, in bytes.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_metadata_block_size(strata_options_t *opt, size_t v);

// Nonzero (the default): compactions put in the block cache the data blocks they write from
// input blocks that readers found there (`warm_compaction_outputs`).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_warm_compaction_outputs(strata_options_t *opt, unsigned char v);

// How hard to erase a deleted table's blocks from the block cache
// (`uncache_aggressiveness`, RocksDB's meaning): 0 never; N erases while at least
// 0.99^(N-1) of the blocks tried were cached. Default 300.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_uncache_aggressiveness(strata_options_t *opt, uint32_t v);

// Which tables' data blocks are put in the block cache as they are written, numbered as
// RocksDB's `PrepopulateBlockCache`: 0 none, 1 those flushes write. Another number leaves
// the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_prepopulate_block_cache(strata_options_t *opt, int v);

// What opening does with a bad WAL record, numbered as RocksDB's `WALRecoveryMode`: 0
// (`kTolerateCorruptedTailRecords`) drops a torn tail of the newest WAL only and refuses
// damage elsewhere, syncing each WAL as a memtable switch closes it; 2
// (`kPointInTimeRecovery`, the default) keeps what precedes the first bad record of any WAL,
// and with one column family leaves a closed WAL unsynced until a synced write needs it.
// Another number leaves the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_wal_recovery_mode(strata_options_t *opt, int v);

// Keep tables' index and filter blocks in the block cache, charged and evicted like data
// blocks, instead of pinned with each open table (0 or 1; 0 by default).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_cache_index_and_filter_blocks(strata_options_t *opt, unsigned char v);

// With index and filter blocks in the block cache, keep the top-level blocks of
// partitioned tables with the open table (0 or 1; 1 by default).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_pin_top_level_index_and_filter(strata_options_t *opt, unsigned char v);

// With index and filter blocks in the block cache, keep those of level-0 tables with the
// open table (0 or 1; 0 by default).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_pin_l0_filter_and_index_blocks_in_cache(strata_options_t *opt, unsigned char v);

// Bytes of the shared block cache; 0 disables it.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_block_cache_size(strata_options_t *opt, size_t v);

// The most table files held open at once; -1 (any negative value), as in RocksDB, keeps
// every table open once read. 0 is refused at open.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_max_open_files(strata_options_t *opt, int v);

// Read tables and blob files for user reads with direct IO (O_DIRECT), around the page
// cache. An open on a file system without direct IO fails naming the option.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_use_direct_reads(strata_options_t *opt, unsigned char v);

// Write flush and compaction outputs, and read compaction inputs, with direct IO.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_use_direct_io_for_flush_and_compaction(strata_options_t *opt, unsigned char v);

// Read tables and blob files through read-only memory mappings (not with direct reads).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_allow_mmap_reads(strata_options_t *opt, unsigned char v);

// Bytes a compaction reads ahead in each input table when it reads with direct IO.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_compaction_readahead_size(strata_options_t *opt, size_t v);

// Background threads: one flushes, the others compact.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_max_background_jobs(strata_options_t *opt, int v);

// L0 files that trigger a compaction.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_level0_file_num_compaction_trigger(strata_options_t *opt, int v);

// The smallest target size of the base level, in bytes.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_max_bytes_for_level_base(strata_options_t *opt, uint64_t v);

// Size at which compaction outputs are cut, in bytes.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_target_file_size_base(strata_options_t *opt, uint64_t v);

// Levels of the tree, 2 to 7.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_num_levels(strata_options_t *opt, int v);

// Run no compaction in the background (0 or 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_disable_auto_compactions(strata_options_t *opt, unsigned char v);

// Leveled: merge L0 into the level below once reads have spent on its files about what the
// merge costs, below the file-count trigger (0 or 1; default 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_read_triggered_compaction(strata_options_t *opt, unsigned char v);

// Compaction style, numbered as RocksDB's C API: 0 leveled, 1 universal. Another number
// leaves the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_compaction_style(strata_options_t *opt, int v);

// New read options: no snapshot (reads see the latest data), no bounds.
strata_readoptions_t *strata_readoptions_create(void);

// Releases read options (and their hold on a snapshot).
//
// # Safety
// `opt` must be null or a handle from `strata_readoptions_create`, released once.
void strata_readoptions_destroy(strata_readoptions_t *opt);

// Reads through these options see the database as of `snapshot`; null reads the latest.
//
// # Safety
// `opt` must be null or a live handle; `snapshot` null or a live snapshot.
void strata_readoptions_set_snapshot(strata_readoptions_t *opt, const strata_snapshot_t *snapshot);

// Iterators see no key below `key` (inclusive); a null `key` removes the bound.
//
// # Safety
// `opt` must be null or a live handle; `key` null or `len` readable bytes.
void strata_readoptions_set_iterate_lower_bound(strata_readoptions_t *opt, const char *key, size_t len);

// Iterators see no key at or above `key` (exclusive); a null `key` removes the bound.
//
// # Safety
// `opt` must be null or a live handle; `key` null or `len` readable bytes.
void strata_readoptions_set_iterate_upper_bound(strata_readoptions_t *opt, const char *key, size_t len);

// Bytes each iterator reads from a table file at a time, from its first read on (RocksDB's
// `readahead_size`); 0, the default, lets the window grow as a scan goes on.
//
// # Safety
// `opt` must be null or a live handle.
void strata_readoptions_set_readahead_size(strata_readoptions_t *opt, size_t bytes);

// New write options: no sync, WAL on.
strata_writeoptions_t *strata_writeoptions_create(void);

// Releases write options.
//
// # Safety
// `opt` must be null or a handle from `strata_writeoptions_create`, released once.
void strata_writeoptions_destroy(strata_writeoptions_t *opt);

// Writes return only once durable (fdatasync of the WAL) (0 or 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_writeoptions_set_sync(strata_writeoptions_t *opt, unsigned char v);

// Writes skip the WAL: a crash loses them until they are flushed (0 or 1).
//
// # Safety
// `opt` must be null or a live handle.
void strata_writeoptions_disable_wal(strata_writeoptions_t *opt, unsigned char v);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* STRATA_H */
