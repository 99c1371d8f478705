/* Strata's C API. Generated from crates/strata-c/src by cbindgen: do not edit; run
   STRATA_C_HEADER=write cargo test -p strata-c --test header to regenerate.

   Ownership, for every function:
   - A handle from a *_create, *_open* or strata_create_* function is the caller's, released
     once with the matching *_destroy, strata_close, strata_release_snapshot or
     strata_iter_destroy. Release iterators, snapshots and column family handles before
     closing their database.
   - Bytes passed in are borrowed for the call only; a length of 0 allows a null pointer, a
     null pointer with a non-zero length is refused with an error (in *errptr; for a batch,
     by strata_write; for an iterator, by strata_iter_get_error).
   - Bytes returned by value (strata_get, strata_property_value, error messages, family
     names) are malloc'd and the caller's: release them with strata_free (or free).
   - Bytes returned by reference (strata_iter_key, strata_iter_value) belong to the
     iterator, valid until it moves or is destroyed.
   - On failure *errptr gets a malloc'd message (one already there is freed first) and the
     function returns null, 0 or nothing; on success *errptr is left alone. errptr may be
     null.
   - Callback objects (merge operators, comparators, compaction filters, event listeners)
     take a void* state and a destructor: the handle is a share of the object, options and
     databases given it keep their own, and the destructor runs once, when the last share
     goes (possibly on a background thread, after strata_close; also when creation fails).
     Their functions are called from the engine's threads, concurrently: they must be
     thread-safe and must not unwind. Values they return are malloc'd; Strata frees them.
   - Transactions must be destroyed before their database is closed, and a cursor before
     its transaction (which is used only through the cursor while it lives). Destroying a
     running transaction rolls it back; a prepared one stays prepared, for
     strata_transactiondb_get_prepared_transactions.
   Handles may be shared between threads, except iterators, write batches, transactions,
   cursors, table file writers and backup engines. */

#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

// `strata_writebatch_iterate_entries`' kind: set the key to the value.
#define STRATA_BATCH_PUT 0

// Remove the key.
#define STRATA_BATCH_DELETE 1

// Remove the key's one older put (the writer promised there is at most one).
#define STRATA_BATCH_SINGLE_DELETE 2

// Merge the value, an operand, into the key.
#define STRATA_BATCH_MERGE 3

// Remove every key from the key (included) to the value (excluded).
#define STRATA_BATCH_RANGE_DELETION 4

// `strata_event_t.kind`: a flush began.
#define STRATA_EVENT_FLUSH_BEGIN 0

// A flush wrote its table.
#define STRATA_EVENT_FLUSH_COMPLETED 1

// A compaction began.
#define STRATA_EVENT_COMPACTION_BEGIN 2

// A compaction ended (`message` set if it failed).
#define STRATA_EVENT_COMPACTION_COMPLETED 3

// A column family's write-stall condition changed.
#define STRATA_EVENT_STALL_CONDITIONS_CHANGED 4

// A background job failed (`message` says how).
#define STRATA_EVENT_BACKGROUND_ERROR 5

// A table file was created.
#define STRATA_EVENT_TABLE_FILE_CREATED 6

// A table file was deleted.
#define STRATA_EVENT_TABLE_FILE_DELETED 7

// A WAL file was deleted.
#define STRATA_EVENT_WAL_FILE_DELETED 8

// The list of backups at one moment.
typedef struct strata_backup_engine_info_t strata_backup_engine_info_t;

// The backups kept in one directory.
typedef struct strata_backup_engine_t strata_backup_engine_t;

// A handle of a column family of an open database.
typedef struct strata_column_family_t strata_column_family_t;

// A compaction filter; see `strata_options_set_compaction_filter`.
typedef struct strata_compactionfilter_t strata_compactionfilter_t;

// A key order; see `strata_options_set_comparator`.
typedef struct strata_comparator_t strata_comparator_t;

// An event listener; see `strata_options_add_eventlistener`.
typedef struct strata_eventlistener_t strata_eventlistener_t;

// How files are ingested.
typedef struct strata_ingestexternalfileoptions_t strata_ingestexternalfileoptions_t;

// A cursor over a database, one of its column families, or a transaction.
typedef struct strata_iterator_t strata_iterator_t;

// The metadata of the tables of a database, as they stood when it was taken.
typedef struct strata_livefiles_t strata_livefiles_t;

// A merge operator; see `strata_options_set_merge_operator`.
typedef struct strata_mergeoperator_t strata_mergeoperator_t;

// Options for opening a database and for new column families.
typedef struct strata_options_t strata_options_t;

// A value held in place.
typedef struct strata_pinnableslice_t strata_pinnableslice_t;

// Options for reads and iterators: a snapshot and iteration bounds.
typedef struct strata_readoptions_t strata_readoptions_t;

// A snapshot of a database: reads through it ignore later writes.
typedef struct strata_snapshot_t strata_snapshot_t;

// A table file being written.
typedef struct strata_sstfilewriter_t strata_sstfilewriter_t;

// An open database.
typedef struct strata_t strata_t;

// Options of a pessimistic transaction.
typedef struct strata_transaction_options_t strata_transaction_options_t;

// A transaction, optimistic or pessimistic.
typedef struct strata_transaction_t strata_transaction_t;

// A database whose writes go through key locks, for pessimistic transactions.
typedef struct strata_transactiondb_t strata_transactiondb_t;

// A cursor whose current entry can be updated or deleted through its transaction.
typedef struct strata_txn_cursor_t strata_txn_cursor_t;

// A position in the change feed.
typedef struct strata_wal_iterator_t strata_wal_iterator_t;

// Options of `strata_get_updates_since` (RocksDB's `rocksdb_wal_readoptions_t`). Strata has
// none yet and gives no way to make one: pass null.
typedef struct strata_wal_readoptions_t strata_wal_readoptions_t;

// Updates applied together by `strata_write`.
typedef struct strata_writebatch_t strata_writebatch_t;

// Options for writes: sync, and skipping the WAL.
typedef struct strata_writeoptions_t strata_writeoptions_t;

// A put: `(state, key, klen, value, vlen)`.
typedef void (*strata_batch_put_fn)(void*, const char*, size_t, const char*, size_t);

// A deletion: `(state, key, klen)`.
typedef void (*strata_batch_delete_fn)(void*, const char*, size_t);

// A put or merge in a family: `(state, cf_id, key, klen, value, vlen)`.
typedef void (*strata_batch_put_cf_fn)(void*, uint32_t, const char*, size_t, const char*, size_t);

// A deletion in a family: `(state, cf_id, key, klen)`.
typedef void (*strata_batch_delete_cf_fn)(void*, uint32_t, const char*, size_t);

// Any update: `(state, kind, cf_id, key, klen, value, vlen)`, `kind` a `STRATA_BATCH_*`;
// the value is empty for deletions and the end key for a range deletion.
typedef void (*strata_batch_entry_fn)(void*, int, uint32_t, const char*, size_t, const char*, size_t);

// A log-data blob: `(state, blob, len)`.
typedef void (*strata_batch_log_data_fn)(void*, const char*, size_t);

// The destructor of a callback object's state; may be null.
typedef void (*strata_destructor_fn)(void *state);

// A C filter's decision on the newest version of `key`, which no snapshot sees, in a
// compaction writing to `level`. `is_merge_operand` is 1 for a merge operand not yet
// combined with a value, 0 for a value. Return 1 to remove the entry; or return 0 and, to
// change its value, set `*value_changed` to 1 and `*new_value` to a malloc'd buffer of
// `*new_value_length` bytes (Strata frees it); return 0 alone to keep it.
typedef unsigned char (*strata_compaction_filter_fn)(void *state, int level, const char *key, size_t key_length, unsigned char is_merge_operand, const char *existing_value, size_t value_length, char **new_value, size_t *new_value_length, unsigned char *value_changed);

// A C comparator's order: negative if `a` sorts before `b`, 0 if they are equal, positive
// after.
typedef int (*strata_compare_fn)(void *state, const char *a, size_t alen, const char *b, size_t blen);

// One event. Fields an event kind does not fill are 0 or null; strings are valid during the
// call only.
typedef struct {
  // One of the `STRATA_EVENT_*` values.
  int kind;
  // The column family (not NUL-terminated); null for file deletions and background
  // errors.
  const char *cf_name;
  // The length of `cf_name`.
  size_t cf_name_len;
  // The table written by a flush, the table created or deleted, or the WAL deleted.
  uint64_t file_number;
  // The path of that file, NUL-terminated; null for compactions and stalls.
  const char *path;
  // A compaction's base input level.
  int input_level;
  // A compaction's output level.
  int output_level;
  // Bytes a compaction read.
  uint64_t bytes_read;
  // Bytes a compaction wrote; the bytes of a flushed or created table.
  uint64_t bytes_written;
  // Entries of a flushed or created table.
  uint64_t entries;
  // Why, as the engine names it (`Manual`, `LevelL0FilesNum`, `Flush`, `Obsolete`, ...),
  // NUL-terminated; for a stall change, the cause (null if none).
  const char *reason;
  // A stall change's condition before and after: `Normal`, `Delayed` or `Stopped`.
  const char *previous_condition;
  // See `previous_condition`.
  const char *current_condition;
  // A background error, or a failed compaction's error, NUL-terminated; else null.
  const char *message;
} strata_event_t;

// An event listener's function.
typedef void (*strata_event_fn)(void *state, const strata_event_t *event);

// A C operator's full merge: the value of `key` after `num_operands` operands (oldest
// first) applied to `existing_value` (null when the key has no value). Returns a malloc'd
// value and its length in `*new_value_length`, with `*success` set to 1; `*success` 0 fails.
typedef char *(*strata_full_merge_fn)(void *state, const char *key, size_t key_length, const char *existing_value, size_t existing_value_length, const char *const *operands_list, const size_t *operands_list_length, int num_operands, unsigned char *success, size_t *new_value_length);

// A C operator's partial merge: one operand with the effect of `num_operands` (two or more,
// oldest first), malloc'd, with `*success` 1; `*success` 0 keeps the operands as they are.
typedef char *(*strata_partial_merge_fn)(void *state, const char *key, size_t key_length, const char *const *operands_list, const size_t *operands_list_length, int num_operands, unsigned char *success, size_t *new_value_length);

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Writes an openable copy of the database to directory `dir`, which must not exist: tables
// hard-linked (copied across file systems), WALs copied. With `log_size_for_flush` > 0, the
// memtables are flushed first if the WALs hold at least that many bytes (0: never flush).
//
// # Safety
// Live `db`; `dir` a NUL-terminated path; `errptr` as usual.
void strata_checkpoint_create(strata_t *db, const char *dir, uint64_t log_size_for_flush, char **errptr);

// Opens (creating if needed) the backup directory `path`. Null and `*errptr` set on failure.
//
// # Safety
// `path` a NUL-terminated path; `errptr` as usual.
strata_backup_engine_t *strata_backup_engine_open(const char *path, char **errptr);

// Releases a backup engine (the backups stay on disk).
//
// # Safety
// `be` null or from `strata_backup_engine_open`, released once.
void strata_backup_engine_close(strata_backup_engine_t *be);

// Backs up the database (only files not already in an earlier backup are copied); returns
// the new backup's id, 0 on failure.
//
// # Safety
// Live `be` (this thread's) and `db`; `errptr` as usual.
uint64_t strata_backup_engine_create_new_backup(strata_backup_engine_t *be, strata_t *db, char **errptr);

// Checks every file of backup `id` against its recorded size and crc32c.
//
// # Safety
// Live `be`; `errptr` as usual.
void strata_backup_engine_verify_backup(strata_backup_engine_t *be, uint64_t id, char **errptr);

// Restores backup `id` into directory `db_dir` (which must hold no database), checking
// each file as it is copied.
//
// # Safety
// Live `be`; `db_dir` a NUL-terminated path; `errptr` as usual.
void strata_backup_engine_restore_db_from_backup(strata_backup_engine_t *be, uint64_t id, const char *db_dir, char **errptr);

// Deletes backup `id` (files no other backup shares are removed).
//
// # Safety
// Live `be` (this thread's); `errptr` as usual.
void strata_backup_engine_delete_backup(strata_backup_engine_t *be, uint64_t id, char **errptr);

// Deletes all but the newest `num_backups_to_keep` backups.
//
// # Safety
// Live `be` (this thread's); `errptr` as usual.
void strata_backup_engine_purge_old_backups(strata_backup_engine_t *be, uint32_t num_backups_to_keep, char **errptr);

// The backups now, oldest first; release the list with `strata_backup_engine_info_destroy`.
// Null for a null engine.
//
// # Safety
// `be` null or a live handle.
const strata_backup_engine_info_t *strata_backup_engine_get_backup_info(strata_backup_engine_t *be);

// Releases a backup list.
//
// # Safety
// `info` null or from `strata_backup_engine_get_backup_info`, released once.
void strata_backup_engine_info_destroy(const strata_backup_engine_info_t *info);

// The number of backups in the list (0 for null).
//
// # Safety
// `info` null or a live list.
int strata_backup_engine_info_count(const strata_backup_engine_info_t *info);

// The id of backup `index` (0 when out of range).
//
// # Safety
// `info` null or a live list.
uint64_t strata_backup_engine_info_backup_id(const strata_backup_engine_info_t *info, int index);

// When backup `index` was made, in seconds since the Unix epoch (0 when out of range).
//
// # Safety
// `info` null or a live list.
uint64_t strata_backup_engine_info_timestamp(const strata_backup_engine_info_t *info, int index);

// The bytes of backup `index`'s files (0 when out of range).
//
// # Safety
// `info` null or a live list.
uint64_t strata_backup_engine_info_size(const strata_backup_engine_info_t *info, int index);

// The number of files of backup `index` (0 when out of range).
//
// # Safety
// `info` null or a live list.
uint32_t strata_backup_engine_info_number_files(const strata_backup_engine_info_t *info, int index);

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

// Adds a blob to the batch's WAL record only (RocksDB's `rocksdb_writebatch_put_log_data`):
// no sequence number, not counted, never applied; the change feed gives it back
// (`strata_writebatch_iterate_log_data`).
//
// # Safety
// `b` null or a live batch; `blob` readable for `len` bytes.
void strata_writebatch_put_log_data(strata_writebatch_t *b, const char *blob, size_t len);

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

// Adds: merge `operand` into `key` with the family's merge operator.
//
// # Safety
// `b` null or a live batch; `key` and `operand` readable for their lengths.
void strata_writebatch_merge(strata_writebatch_t *b, const char *key, size_t klen, const char *operand, size_t oplen);

// Adds: merge `operand` into `key` of column family `cf` (a null `cf` is ignored).
//
// # Safety
// As `strata_writebatch_merge`; `cf` null or a live handle.
void strata_writebatch_merge_cf(strata_writebatch_t *b, const strata_column_family_t *cf, const char *key, size_t klen, const char *operand, size_t oplen);

// Calls `put` for each put and `deleted` for each deletion (single deletions too) of the
// batch, in any family, in order (RocksDB's `rocksdb_writebatch_iterate`). Merges and range
// deletions are not reported: read those with `strata_writebatch_iterate_cf` or
// `strata_writebatch_iterate_entries`. A malformed batch stops the walk.
//
// # Safety
// `b` null or a live batch; the callbacks null or callable with `state`.
void strata_writebatch_iterate(const strata_writebatch_t *b, void *state, strata_batch_put_fn put, strata_batch_delete_fn deleted);

// As `strata_writebatch_iterate`, with each update's family id, and merges given to
// `merge_cf` (RocksDB's `rocksdb_writebatch_iterate_cf`). Range deletions are not
// reported: read those with `strata_writebatch_iterate_entries`.
//
// # Safety
// `b` null or a live batch; the callbacks null or callable with `state`.
void strata_writebatch_iterate_cf(const strata_writebatch_t *b, void *state, strata_batch_put_cf_fn put_cf, strata_batch_delete_cf_fn deleted_cf, strata_batch_put_cf_fn merge_cf);

// Calls `entry` for every update of the batch, in order, with its `STRATA_BATCH_*` kind
// and family id (a range deletion's value is its end key). A malformed batch stops the
// walk and sets `*errptr`; so does a null batch.
//
// # Safety
// `b` null or a live batch; `entry` null or callable with `state`; `errptr` as usual.
void strata_writebatch_iterate_entries(const strata_writebatch_t *b, void *state, strata_batch_entry_fn entry, char **errptr);

// Calls `log_data` for each log-data blob of the batch (`strata_writebatch_put_log_data`),
// in order; the updates are not reported (read them with `strata_writebatch_iterate_entries`).
// A null batch sets `*errptr`.
//
// # Safety
// `b` null or a live batch; `log_data` null or callable with `state`; `errptr` as usual.
void strata_writebatch_iterate_log_data(const strata_writebatch_t *b, void *state, strata_batch_log_data_fn log_data, char **errptr);

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

// The family's id (RocksDB's `rocksdb_column_family_handle_get_id`): 0 for the default
// family; the id a batch read back (`strata_writebatch_iterate_cf`) names it by. 0 for a
// null handle.
//
// # Safety
// `cf` null or a live handle.
uint32_t strata_column_family_handle_get_id(const strata_column_family_t *cf);

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

// A compaction filter of the C function `filter`, called with `state`; `destructor` (may be
// null) releases `state` once the filter is no longer used, also when creation fails.
// `name` is copied. Null and `*errptr` set for a null `filter` or name. Release the handle
// with `strata_compactionfilter_destroy`.
//
// # Safety
// `filter` and `state` usable from any thread, concurrently; `name` NUL-terminated;
// `errptr` as usual.
strata_compactionfilter_t *strata_compactionfilter_create(void *state, strata_destructor_fn destructor, strata_compaction_filter_fn filter, const char *name, char **errptr);

// Releases the caller's share of a compaction filter (options and databases keep theirs).
//
// # Safety
// `filter` null or from `strata_compactionfilter_create`, released once.
void strata_compactionfilter_destroy(strata_compactionfilter_t *filter);

// A key order of the C function `compare`, called with `state`; `destructor` (may be null)
// releases `state` once the order is no longer used, also when creation fails. `name` is
// copied. Null and `*errptr` set for a null `compare` or name. Release the handle with
// `strata_comparator_destroy`.
//
// # Safety
// `compare` and `state` usable from any thread, concurrently; `name` NUL-terminated;
// `errptr` as usual.
strata_comparator_t *strata_comparator_create(void *state, strata_destructor_fn destructor, strata_compare_fn compare, const char *name, char **errptr);

// Releases the caller's share of a comparator (options and databases keep theirs).
//
// # Safety
// `cmp` null or from `strata_comparator_create`, released once.
void strata_comparator_destroy(strata_comparator_t *cmp);

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

// Opens a secondary instance of the database in `name`, which another process (the primary)
// may be writing, as RocksDB's `rocksdb_open_as_secondary`: it writes nothing into `name`
// and takes no lock there; its own files (its LOG) go to `secondary_path`, created if
// missing. It sees the primary as of the open; `strata_try_catch_up_with_primary` brings it
// up to date. Writes through it fail.
//
// # Safety
// As `strata_open`; `secondary_path` a NUL-terminated path.
strata_t *strata_open_as_secondary(const strata_options_t *options, const char *name, const char *secondary_path, char **errptr);

// Reads what the primary wrote since the last catch-up into a secondary instance (RocksDB's
// `rocksdb_try_catch_up_with_primary`); `*errptr` set on failure, and for a database not
// opened with `strata_open_as_secondary`.
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_try_catch_up_with_primary(strata_t *db, char **errptr);

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
// A batch that refused one of its updates is refused whole, with that update's error.
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

// Appends the WAL records held in memory under `strata_options_set_manual_wal_flush` to the
// WAL file, and with `sync` (0 or 1) makes every write so far durable too (RocksDB's
// `rocksdb_flush_wal`). Without the option every write's record is in the file already,
// and only `sync` does anything. `*errptr` set on failure, and for a read-only or secondary
// database.
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_flush_wal(strata_t *db, unsigned char sync, char **errptr);

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

// Merges `operand` into `key` with the merge operator of the options the database was
// opened with.
//
// # Safety
// Live `db` and `options`; `key` and `operand` readable for their lengths; `errptr` as
// usual.
void strata_merge(strata_t *db, const strata_writeoptions_t *options, const char *key, size_t keylen, const char *operand, size_t oplen, char **errptr);

// Sets `key` to `value` in a TTL database, expiring after `ttl_seconds` (instead of the
// family's TTL). Refused in a database without a TTL.
//
// # Safety
// As `strata_put`.
void strata_put_with_ttl(strata_t *db, const char *key, size_t keylen, const char *value, size_t vallen, uint64_t ttl_seconds, char **errptr);

// Reads `num_keys` keys in one view of the database (RocksDB's `MultiGet`). For key `i`,
// `values_list[i]` gets its value, malloc'd (release each with `strata_free`), and
// `values_list_sizes[i]` its length; an absent key gets null and 0; a key that could not be
// read gets null and a malloc'd message in `errs[i]` (null otherwise). A null key pointer
// with a non-zero size is refused for that key alone, in `errs[i]`.
//
// # Safety
// Live `db` and `options`; `keys_list` and `keys_list_sizes` of `num_keys` entries, each
// key readable for its size; `values_list`, `values_list_sizes` and `errs` writable for
// `num_keys` entries.
void strata_multi_get(strata_t *db, const strata_readoptions_t *options, size_t num_keys, const char *const *keys_list, const size_t *keys_list_sizes, char **values_list, size_t *values_list_sizes, char **errs);

// As `strata_multi_get`, in column family `cf`.
//
// # Safety
// As `strata_multi_get`; `cf` a live family handle.
void strata_multi_get_cf(strata_t *db, const strata_readoptions_t *options, const strata_column_family_t *cf, size_t num_keys, const char *const *keys_list, const size_t *keys_list_sizes, char **values_list, size_t *values_list_sizes, char **errs);

// After a background error stopped writes, clears it and lets writes and background work
// go on (RocksDB's `Resume`); fails if the database cannot resume.
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_resume(strata_t *db, char **errptr);

// Rebuilds the manifest of the database in `name` from its tables and WALs (RocksDB's
// `RepairDB`); unreadable files go to `name/lost/`. The database must not be open.
//
// # Safety
// `options` a live handle, `name` a NUL-terminated path, `errptr` as usual.
void strata_repair_db(const strata_options_t *options, const char *name, char **errptr);

// As `strata_merge`, in column family `cf` (with that family's merge operator).
//
// # Safety
// As `strata_merge`; `cf` a live family handle.
void strata_merge_cf(strata_t *db, const strata_writeoptions_t *options, const strata_column_family_t *cf, const char *key, size_t keylen, const char *operand, size_t oplen, char **errptr);

// Compacts all of level `level` of the default family into the next one (L0 into the base
// level: db_bench's `compact0` and `compact1`), and waits for it.
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_compact_level(strata_t *db, int level, char **errptr);

// Compacts every column family down to its last level, and waits for it.
//
// # Safety
// Live `db`; `errptr` as usual.
void strata_compact_all(strata_t *db, char **errptr);

// Releases memory that Strata returned: values, property texts, error messages and names.
// Null is ignored.
//
// # Safety
// `ptr` must be null or a pointer this library returned for the caller to release, not yet
// released.
void strata_free(void *ptr);

// Removes `key`, written once since its last removal (RocksDB's `rocksdb_singledelete`):
// the deletion and the put it meets both vanish at compaction. Undefined which version
// reads if the key was put more than once.
//
// # Safety
// As `strata_delete`.
void strata_singledelete(strata_t *db, const strata_writeoptions_t *options, const char *key, size_t keylen, char **errptr);

// As `strata_singledelete`, in column family `cf`.
//
// # Safety
// As `strata_delete_cf`.
void strata_singledelete_cf(strata_t *db, const strata_writeoptions_t *options, const strata_column_family_t *cf, const char *key, size_t keylen, char **errptr);

// The approximate bytes of the tables' data in each of `num_ranges` key ranges
// [`range_start_key[i]`, `range_limit_key[i]`) of the default family, into `sizes[i]`
// (RocksDB's `rocksdb_approximate_sizes`): within about a data block per table, memtables
// not counted. On an error every size is 0.
//
// # Safety
// Live `db`; each array `num_ranges` long (keys readable for their lengths); `sizes`
// writable for `num_ranges` values; `errptr` as usual.
void strata_approximate_sizes(strata_t *db, int num_ranges, const char *const *range_start_key, const size_t *range_start_key_len, const char *const *range_limit_key, const size_t *range_limit_key_len, uint64_t *sizes, char **errptr);

// As `strata_approximate_sizes`, in column family `cf`.
//
// # Safety
// As `strata_approximate_sizes`; `cf` a live handle.
void strata_approximate_sizes_cf(strata_t *db, const strata_column_family_t *cf, int num_ranges, const char *const *range_start_key, const size_t *range_start_key_len, const char *const *range_limit_key, const size_t *range_limit_key_len, uint64_t *sizes, char **errptr);

// Drops the tables of levels 1 and up whose keys all lie in [`start_key`, `limit_key`] of
// the default family, without reading them (RocksDB's `rocksdb_delete_file_in_range`); a
// null key is an open bound. Keys in memtables, level 0 and tables reaching past the range
// remain: follow with `strata_delete_range`.
//
// # Safety
// Live `db`; the keys null or readable for their lengths; `errptr` as usual.
void strata_delete_file_in_range(strata_t *db, const char *start_key, size_t start_key_len, const char *limit_key, size_t limit_key_len, char **errptr);

// As `strata_delete_file_in_range`, in column family `cf`.
//
// # Safety
// As `strata_delete_file_in_range`; `cf` a live handle.
void strata_delete_file_in_range_cf(strata_t *db, const strata_column_family_t *cf, const char *start_key, size_t start_key_len, const char *limit_key, size_t limit_key_len, char **errptr);

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

// Re-pins a database iterator to the current state of its database (RocksDB's
// `rocksdb_iter_refresh`): it then sees the writes made (or, on a secondary, caught up)
// since it was created, keeps its bounds and read options, and is unpositioned. `*errptr`
// set, the iterator unchanged, for a transaction's iterator or a dropped column family.
//
// # Safety
// `it` null or a live iterator; `errptr` as usual.
void strata_iter_refresh(strata_iterator_t *it, char **errptr);

// Sets `*errptr` if the iterator stopped on an error (a corrupt or unreadable table).
//
// # Safety
// `it` null or a live iterator; `errptr` as usual.
void strata_iter_get_error(const strata_iterator_t *it, char **errptr);

// An event listener calling `on_event` with `state` for every event; `destructor` (may be
// null) releases `state` once the listener is no longer used, also when creation fails.
// Null and `*errptr` set for a null `on_event`. Release the handle with
// `strata_eventlistener_destroy`.
//
// # Safety
// `on_event` and `state` usable from any thread, concurrently; `errptr` as usual.
strata_eventlistener_t *strata_eventlistener_create(void *state, strata_destructor_fn destructor, strata_event_fn on_event, char **errptr);

// Releases the caller's share of an event listener (options and databases keep theirs).
//
// # Safety
// `listener` null or from `strata_eventlistener_create`, released once.
void strata_eventlistener_destroy(strata_eventlistener_t *listener);

// Every table of every column family (RocksDB's `rocksdb_livefiles`): its family, level,
// name, size, key range, sequence numbers, entries and deletions, ordered by family, then
// level. Null for a null `db`. Release it with `strata_livefiles_destroy`.
//
// # Safety
// `db` null or a live handle.
strata_livefiles_t *strata_livefiles(strata_t *db);

// Releases what `strata_livefiles` returned; null is ignored.
//
// # Safety
// `files` null or from `strata_livefiles`, released once.
void strata_livefiles_destroy(strata_livefiles_t *files);

// How many tables `files` holds (0 for null).
//
// # Safety
// `files` null or a live handle.
int strata_livefiles_count(const strata_livefiles_t *files);

// The file name of table `index` (`NNNNNN.sst`, in the database's directory).
//
// # Safety
// `files` null or a live handle.
const char *strata_livefiles_name(const strata_livefiles_t *files, int index);

// The column family name of table `index`.
//
// # Safety
// `files` null or a live handle.
const char *strata_livefiles_column_family_name(const strata_livefiles_t *files, int index);

// The level of table `index` (-1 for an index out of range).
//
// # Safety
// `files` null or a live handle.
int strata_livefiles_level(const strata_livefiles_t *files, int index);

// The bytes of table `index`.
//
// # Safety
// `files` null or a live handle.
size_t strata_livefiles_size(const strata_livefiles_t *files, int index);

// The smallest user key of table `index`, `*size` bytes long (null and 0 out of range).
//
// # Safety
// `files` null or a live handle; `size` a valid pointer.
const char *strata_livefiles_smallestkey(const strata_livefiles_t *files, int index, size_t *size);

// The largest user key of table `index`, `*size` bytes long (null and 0 out of range).
//
// # Safety
// `files` null or a live handle; `size` a valid pointer.
const char *strata_livefiles_largestkey(const strata_livefiles_t *files, int index, size_t *size);

// The entries of table `index` (all kinds, range deletions aside).
//
// # Safety
// `files` null or a live handle.
uint64_t strata_livefiles_entries(const strata_livefiles_t *files, int index);

// The deletions among the entries of table `index`.
//
// # Safety
// `files` null or a live handle.
uint64_t strata_livefiles_deletions(const strata_livefiles_t *files, int index);

// The smallest sequence number in table `index`.
//
// # Safety
// `files` null or a live handle.
uint64_t strata_livefiles_smallest_seqno(const strata_livefiles_t *files, int index);

// The largest sequence number in table `index`.
//
// # Safety
// `files` null or a live handle.
uint64_t strata_livefiles_largest_seqno(const strata_livefiles_t *files, int index);

// A merge operator of C functions: `full_merge` (required) and `partial_merge` (may be
// null), called with `state`; `destructor` (may be null) releases `state` once the
// operator is no longer used, also when creation fails. `name` is copied. Null and `*errptr` set for a null
// `full_merge` or name. Release the handle with `strata_mergeoperator_destroy`.
//
// # Safety
// The functions and `state` usable from any thread, concurrently; `name` NUL-terminated;
// `errptr` as usual.
strata_mergeoperator_t *strata_mergeoperator_create(void *state, strata_destructor_fn destructor, strata_full_merge_fn full_merge, strata_partial_merge_fn partial_merge, const char *name, char **errptr);

// The built-in `uint64add`: adds 8-byte little-endian unsigned integers (an operand or
// value of another length counts as 0). Release it with `strata_mergeoperator_destroy`.
strata_mergeoperator_t *strata_mergeoperator_create_uint64add(void);

// The built-in `stringappend`: joins the value and operands, oldest first, with
// `delimiter` (copied; may be empty). Null and `*errptr` set for a null `delimiter` with a
// non-zero length. Release it with `strata_mergeoperator_destroy`.
//
// # Safety
// `delimiter` readable for `delimiter_len`; `errptr` as usual.
strata_mergeoperator_t *strata_mergeoperator_create_stringappend(const char *delimiter, size_t delimiter_len, char **errptr);

// Releases the caller's share of a merge operator (options and databases keep theirs).
//
// # Safety
// `op` null or from a `strata_mergeoperator_create*` function, released once.
void strata_mergeoperator_destroy(strata_mergeoperator_t *op);

// Changes options of the default column family (`rocksdb_set_options`): `count` option
// names in `keys` with their values in `values`, as the OPTIONS file writes them.
//
// # Safety
// Live `db`; `keys` and `values` readable for `count` NUL-terminated strings each;
// `errptr` as usual.
void strata_set_options(strata_t *db, int count, const char *const *keys, const char *const *values, char **errptr);

// Changes options of column family `cf` (`rocksdb_set_options_cf`); see
// `strata_set_options`.
//
// # Safety
// Live `db` and `cf`; `keys` and `values` readable for `count` NUL-terminated strings
// each; `errptr` as usual.
void strata_set_options_cf(strata_t *db, const strata_column_family_t *cf, int count, const char *const *keys, const char *const *values, char **errptr);

// Changes database-wide options (`rocksdb_set_db_options`); see `strata_set_options`.
//
// # Safety
// As `strata_set_options`.
void strata_set_db_options(strata_t *db, int count, const char *const *keys, const char *const *values, char **errptr);

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

// Each memtable's point index (a hash index of its keys that gets use instead of a search),
// as a fraction of the write buffer size (0 to 0.5; 0 keeps none; default 0.125).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_memtable_point_index_ratio(strata_options_t *opt, double v);

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

// Hold each write's WAL record in memory (RocksDB's `manual_wal_flush`; 0 or 1, 0 by
// default) until `strata_flush_wal`, a synced write or `strata_sync_wal`, a memtable
// switch, a checkpoint or backup, a megabyte of them, or close: a write then makes no
// system call, and a killed process loses the writes still held (what it leaves is a
// prefix of the writes).
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_manual_wal_flush(strata_options_t *opt, unsigned char v);

// Compression of WAL records (RocksDB's `rocksdb_options_set_wal_compression`), numbered
// as table compression: 0 none (the default), 1 snappy, 4 lz4, 7 zstd. A record is stored
// compressed when that saves an eighth of it; every reader of the WAL undoes it. Another
// number leaves the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_wal_compression(strata_options_t *opt, int v);

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

// Keep WALs no longer needed for recovery this many seconds, in the database's `archive/`
// directory, for the change feed (`strata_get_updates_since`; RocksDB's
// `WAL_ttl_seconds`). 0, with `strata_options_set_WAL_size_limit_MB` 0 (the default),
// keeps none.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_WAL_ttl_seconds(strata_options_t *opt, uint64_t v);

// Keep archived WALs (see `strata_options_set_WAL_ttl_seconds`) up to this many MiB in
// all, the oldest going first (RocksDB's `WAL_size_limit_MB`); 0: no size limit.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_WAL_size_limit_MB(strata_options_t *opt, uint64_t v);

// Compression of the tables written into the last level, numbered as
// `strata_options_set_compression`; -1 (RocksDB's `kDisableCompressionOption`) takes
// `compression` (or `compression_per_level`) there too. Another number leaves the setting
// unchanged.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_bottommost_compression(strata_options_t *opt, int v);

// The compression of each level's tables (RocksDB's `compression_per_level`):
// `level_values[L]` for level L (the last for the levels beyond), numbered as
// `strata_options_set_compression`; 0 levels goes back to `compression` everywhere. A
// number outside the known ones, or a null `level_values` with a non-zero `num_levels`,
// leaves the setting unchanged.
//
// # Safety
// `opt` must be null or a live handle; `level_values` null or `num_levels` readable ints.
void strata_options_set_compression_per_level(strata_options_t *opt, const int *level_values, size_t num_levels);

// Options of `compression` (RocksDB's `rocksdb_options_set_compression_options`): the
// compressor's `level` (32767, RocksDB's `kDefaultCompressionLevel`, for its default) and
// `max_dict_bytes`, the size of the zstd dictionary each table is compressed with (0: none).
// `w_bits` and `strategy` are zlib's, which Strata does not have: they are ignored. A level
// the compressor does not have is refused by the open.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_compression_options(strata_options_t *opt, int w_bits, int level, int strategy, int max_dict_bytes);

// Bytes of samples the zstd dictionary of `compression` is trained on (RocksDB's
// `rocksdb_options_set_compression_options_zstd_max_train_bytes`); 0 takes the first
// `max_dict_bytes` of a table's data as the dictionary, untrained.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_compression_options_zstd_max_train_bytes(strata_options_t *opt, int zstd_max_train_bytes);

// The options of the bottommost level's compression, as
// `strata_options_set_compression_options` (RocksDB's
// `rocksdb_options_set_bottommost_compression_options`); `enabled` 0 compresses the
// bottommost level under `compression`'s options instead. Used only with
// `strata_options_set_bottommost_compression`.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_bottommost_compression_options(strata_options_t *opt, int w_bits, int level, int strategy, int max_dict_bytes, unsigned char enabled);

// Bytes of samples the bottommost level's zstd dictionary is trained on (RocksDB's
// `rocksdb_options_set_bottommost_compression_options_zstd_max_train_bytes`); `enabled` as
// for `strata_options_set_bottommost_compression_options`.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_bottommost_compression_options_zstd_max_train_bytes(strata_options_t *opt, int zstd_max_train_bytes, unsigned char enabled);

// How the blocks of tables written from now on are checksummed (RocksDB's
// `rocksdb_block_based_options_set_checksum`): 1 crc32c (the default), 4 xxh3. Another
// number leaves the setting unchanged. A table records its checksum, so a database reads
// its tables whatever this is; tables checksummed by xxh3 are not readable by builds before
// it.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_checksum(strata_options_t *opt, char v);

// Reserve the last level for files ingested behind all data
// (`strata_ingestexternalfileoptions_set_ingest_behind`, RocksDB's
// `rocksdb_options_set_allow_ingest_behind`; 0 or 1): compactions never write there. Needs
// at least 3 levels and a style other than FIFO; fixed at open.
//
// # Safety
// `opt` must be null or a live handle.
void strata_options_set_allow_ingest_behind(strata_options_t *opt, unsigned char v);

// Merge operands are combined by `op` (null: no merge operator; merges then fail).
//
// # Safety
// `opt` null or a live handle; `op` null or a live merge operator.
void strata_options_set_merge_operator(strata_options_t *opt, const strata_mergeoperator_t *op);

// Keys are ordered by `cmp` (null: bytewise). A database must be reopened with a comparator
// of the same name.
//
// # Safety
// `opt` null or a live handle; `cmp` null or a live comparator.
void strata_options_set_comparator(strata_options_t *opt, const strata_comparator_t *cmp);

// Compactions ask `filter` what to keep (null: no filter).
//
// # Safety
// `opt` null or a live handle; `filter` null or a live compaction filter.
void strata_options_set_compaction_filter(strata_options_t *opt, const strata_compactionfilter_t *filter);

// Adds `listener` to those told of the database's events (a null listener is ignored).
//
// # Safety
// `opt` null or a live handle; `listener` null or a live event listener.
void strata_options_add_eventlistener(strata_options_t *opt, const strata_eventlistener_t *listener);

// Keys have prefixes as `spec` says, `fixed:N` (the first N bytes; shorter keys have
// none) or `capped:N` (at most N bytes); tables then keep prefix filters. A null `spec`
// removes the extractor. An invalid spec sets `*errptr` naming it, and changes nothing.
//
// # Safety
// `opt` a live handle; `spec` null or NUL-terminated; `errptr` as usual.
void strata_options_set_prefix_extractor(strata_options_t *opt, const char *spec, char **errptr);

// Values expire `seconds` after they are written (a TTL family: reads hide expired
// values, compactions drop them); 0 means no TTL. A family keeps the TTL it was created
// with: reopening with another one is refused.
//
// # Safety
// `opt` null or a live handle.
void strata_options_set_ttl(strata_options_t *opt, uint64_t seconds);

// Iterators stop at the first key whose prefix differs from the seek target's (0 or 1).
//
// # Safety
// `opt` null or a live handle.
void strata_readoptions_set_prefix_same_as_start(strata_readoptions_t *opt, unsigned char v);

// Seeks ignore prefix filters and see every key in order (0 or 1).
//
// # Safety
// `opt` null or a live handle.
void strata_readoptions_set_total_order_seek(strata_readoptions_t *opt, unsigned char v);

// Universal compaction: percent of slack in the size comparison of runs (`size_ratio`, 1
// by default).
//
// # Safety
// `opt` null or a live handle.
void strata_options_set_universal_size_ratio(strata_options_t *opt, uint32_t v);

// Universal compaction: the fewest runs merged at once by size ratio (2 by default).
//
// # Safety
// `opt` null or a live handle.
void strata_options_set_universal_min_merge_width(strata_options_t *opt, size_t v);

// Universal compaction: the most runs merged at once by size ratio (unlimited by default).
//
// # Safety
// `opt` null or a live handle.
void strata_options_set_universal_max_merge_width(strata_options_t *opt, size_t v);

// Universal compaction: bytes of newer runs, as a percent of the oldest run, that trigger a
// full merge (200 by default).
//
// # Safety
// `opt` null or a live handle.
void strata_options_set_universal_max_size_amplification_percent(strata_options_t *opt, uint32_t v);

// The value of `key`, pinned; null when the key is absent or on an error (then `*errptr`
// is set). Release it with `strata_pinnableslice_destroy`.
//
// # Safety
// Live `db` and `options`; `key` readable for `keylen`; `errptr` as usual.
strata_pinnableslice_t *strata_get_pinned(strata_t *db, const strata_readoptions_t *options, const char *key, size_t keylen, char **errptr);

// The pinned bytes and their length in `*vlen`, valid until the slice is destroyed; null
// with `*vlen` 0 for a null slice.
//
// # Safety
// `slice` null or a live slice; `vlen` a valid pointer.
const char *strata_pinnableslice_value(const strata_pinnableslice_t *slice, size_t *vlen);

// Releases a pinned value.
//
// # Safety
// `slice` null or from `strata_get_pinned`, released once.
void strata_pinnableslice_destroy(strata_pinnableslice_t *slice);

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

// Whether the data blocks reads bring in from table files go into the block cache
// (RocksDB's `fill_cache`; nonzero, the default, yes).
//
// # Safety
// `opt` must be null or a live handle.
void strata_readoptions_set_fill_cache(strata_readoptions_t *opt, unsigned char v);

// Whether reads check the checksum of each data block they bring in from a table file
// (RocksDB's `verify_checksums`; nonzero, the default, yes).
//
// # Safety
// `opt` must be null or a live handle.
void strata_readoptions_set_verify_checksums(strata_readoptions_t *opt, unsigned char v);

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

// Creates the table file `path` (replacing a file of that name), written with the table
// options, comparator and merge operator of `options`. Null and `*errptr` set on failure.
//
// # Safety
// `options` a live handle; `path` NUL-terminated; `errptr` as usual.
strata_sstfilewriter_t *strata_sstfilewriter_create(const strata_options_t *options, const char *path, char **errptr);

// Adds `key` = `value`; keys must come in increasing order, each once.
//
// # Safety
// Live `w`; `key` and `value` readable for their lengths; `errptr` as usual.
void strata_sstfilewriter_put(strata_sstfilewriter_t *w, const char *key, size_t keylen, const char *value, size_t vallen, char **errptr);

// Adds a merge operand for `key` (in key order with the other entries).
//
// # Safety
// As `strata_sstfilewriter_put`.
void strata_sstfilewriter_merge(strata_sstfilewriter_t *w, const char *key, size_t keylen, const char *operand, size_t oplen, char **errptr);

// Adds a deletion of `key` (in key order with the other entries).
//
// # Safety
// Live `w`; `key` readable for `keylen`; `errptr` as usual.
void strata_sstfilewriter_delete(strata_sstfilewriter_t *w, const char *key, size_t keylen, char **errptr);

// Adds a deletion of every key in [`begin`, `end`) (in any order with the other entries).
//
// # Safety
// Live `w`; `begin` and `end` readable for their lengths; `errptr` as usual.
void strata_sstfilewriter_delete_range(strata_sstfilewriter_t *w, const char *begin, size_t begin_len, const char *end, size_t end_len, char **errptr);

// The bytes written to the file so far (0 for a null or finished writer).
//
// # Safety
// `w` null or a live writer.
uint64_t strata_sstfilewriter_file_size(strata_sstfilewriter_t *w);

// Completes and syncs the file; afterwards the writer refuses further entries (it must
// still be destroyed). A file with no entry is refused.
//
// # Safety
// Live `w`; `errptr` as usual.
void strata_sstfilewriter_finish(strata_sstfilewriter_t *w, char **errptr);

// Releases a writer.
//
// # Safety
// `w` null or from `strata_sstfilewriter_create`, released once.
void strata_sstfilewriter_destroy(strata_sstfilewriter_t *w);

// Ingest options with Strata's defaults (copy the files; flush overlapping memtables).
strata_ingestexternalfileoptions_t *strata_ingestexternalfileoptions_create(void);

// Releases ingest options.
//
// # Safety
// `opt` null or from `strata_ingestexternalfileoptions_create`, released once.
void strata_ingestexternalfileoptions_destroy(strata_ingestexternalfileoptions_t *opt);

// Move the files into the database (hard links; the sources removed on success) instead of
// copying them (0 or 1).
//
// # Safety
// `opt` null or a live handle.
void strata_ingestexternalfileoptions_set_move_files(strata_ingestexternalfileoptions_t *opt, unsigned char v);

// Flush memtables that overlap a file before ingesting it; without it such an ingest is
// refused (0 or 1).
//
// # Safety
// `opt` null or a live handle.
void strata_ingestexternalfileoptions_set_allow_blocking_flush(strata_ingestexternalfileoptions_t *opt, unsigned char v);

// Place the files under all the family's data (RocksDB's
// `rocksdb_ingestexternalfileoptions_set_ingest_behind`; 0 or 1): in the last level, at
// sequence number 0, so every key already there shadows them. The database must have been
// opened with `strata_options_set_allow_ingest_behind`; the ingest is refused otherwise,
// and when a file overlaps one already in the last level.
//
// # Safety
// `opt` null or a live handle.
void strata_ingestexternalfileoptions_set_ingest_behind(strata_ingestexternalfileoptions_t *opt, unsigned char v);

// Adds the `num_files` table files at `file_list` to the default family (or, with the
// `_cf` variant, to `cf`) atomically: all or none.
//
// # Safety
// Live `db` and `options`; `file_list` of `num_files` NUL-terminated paths; `errptr` as
// usual.
void strata_ingest_external_file(strata_t *db, const char *const *file_list, size_t num_files, const strata_ingestexternalfileoptions_t *options, char **errptr);

// As `strata_ingest_external_file`, into column family `cf`.
//
// # Safety
// As `strata_ingest_external_file`; `cf` a live family handle.
void strata_ingest_external_file_cf(strata_t *db, const strata_column_family_t *cf, const char *const *file_list, size_t num_files, const strata_ingestexternalfileoptions_t *options, char **errptr);

// The sequence number of the last write the database has published (RocksDB's
// `rocksdb_get_latest_sequence_number`): on a secondary instance, the last one it has
// caught up to. 0 for a null `db`. A reader of the change feed asks
// `strata_get_updates_since` for the one after it next time.
//
// # Safety
// `db` null or a live handle.
uint64_t strata_get_latest_sequence_number(strata_t *db);

// Sets `*value` to the statistic `name` (`keys_written`, `gets`, `flushes`,
// `stall_micros`, ... : the numbers Rust's `DbStats::iter` names) and returns 1; an unknown
// name sets `*errptr` listing the known ones, and returns 0.
//
// # Safety
// Live `db`; `name` NUL-terminated; `value` a valid pointer; `errptr` as usual.
unsigned char strata_statistics_get(strata_t *db, const char *name, uint64_t *value, char **errptr);

// Sets the database's counters back to 0 (the gauges, such as memtable sizes, are not
// counters and stay as they are).
//
// # Safety
// `db` null or a live handle.
void strata_statistics_reset(strata_t *db);

// The shape of the default family's tree (memtables, then each level's files and bytes),
// as text, malloc'd and NUL-terminated (release it with `strata_free`); null for a null
// handle.
//
// # Safety
// `db` null or a live handle.
char *strata_tree_shape(strata_t *db);

// Opens (or, with `create_if_missing`, creates) the database in `name` for pessimistic
// transactions, recovering transactions that were prepared and not yet committed. Release
// it with `strata_transactiondb_close`. Null and `*errptr` set on failure.
//
// # Safety
// `options` a live handle, `name` a NUL-terminated path, `errptr` as usual.
strata_transactiondb_t *strata_transactiondb_open(const strata_options_t *options, const char *name, char **errptr);

// Closes the database. Destroy its transactions first; prepared ones stay prepared on
// disk, offered again at the next open.
//
// # Safety
// `tdb` null or from `strata_transactiondb_open`, released once.
void strata_transactiondb_close(strata_transactiondb_t *tdb);

// Sets `key` to `value`, waiting for a transaction's lock on it if needed.
//
// # Safety
// Live `tdb`; `key` and `value` readable for their lengths; `errptr` as usual.
void strata_transactiondb_put(strata_transactiondb_t *tdb, const char *key, size_t keylen, const char *value, size_t vallen, char **errptr);

// Removes `key`, waiting for a transaction's lock on it if needed.
//
// # Safety
// Live `tdb`; `key` readable for `keylen`; `errptr` as usual.
void strata_transactiondb_delete(strata_transactiondb_t *tdb, const char *key, size_t keylen, char **errptr);

// Applies the batch atomically under the locks of its keys (the batch stays the caller's).
//
// # Safety
// Live `tdb`, `options` and `batch`; `errptr` as usual.
void strata_transactiondb_write(strata_transactiondb_t *tdb, const strata_writeoptions_t *options, const strata_writebatch_t *batch, char **errptr);

// The committed value of `key` (as `strata_get`: malloc'd, length in `*vallen`, null when
// absent).
//
// # Safety
// Live `tdb` and `options`; `key` readable for `keylen`; `vallen` valid; `errptr` as usual.
char *strata_transactiondb_get(strata_transactiondb_t *tdb, const strata_readoptions_t *options, const char *key, size_t keylen, size_t *vallen, char **errptr);

// The transactions that were prepared and not yet committed or rolled back (recovered at
// open, or destroyed while prepared), handed out once each: an array of `*count` handles,
// malloc'd (release it with `strata_free`), each handle the caller's, to commit or roll
// back and then destroy. Null with `*count` 0 when there are none.
//
// # Safety
// Live `tdb`, open until the handles are destroyed; `count` a valid pointer.
strata_transaction_t **strata_transactiondb_get_prepared_transactions(strata_transactiondb_t *tdb, size_t *count);

// New transaction options: lock timeout 1 s, deadlock detection on, no expiration, no
// snapshot.
strata_transaction_options_t *strata_transaction_options_create(void);

// Releases transaction options.
//
// # Safety
// `opt` null or from `strata_transaction_options_create`, released once.
void strata_transaction_options_destroy(strata_transaction_options_t *opt);

// How long a lock request waits before failing with Busy, in milliseconds.
//
// # Safety
// `opt` null or a live handle.
void strata_transaction_options_set_lock_timeout(strata_transaction_options_t *opt, uint64_t ms);

// Refuse at once a lock wait that would close a cycle of waiting transactions (0 or 1).
//
// # Safety
// `opt` null or a live handle.
void strata_transaction_options_set_deadlock_detect(strata_transaction_options_t *opt, unsigned char v);

// After `ms` milliseconds the transaction's locks may be taken by others and its commit
// fails; 0 means never.
//
// # Safety
// `opt` null or a live handle.
void strata_transaction_options_set_expiration(strata_transaction_options_t *opt, uint64_t ms);

// Read at a snapshot taken when the transaction begins, and refuse to lock a key written
// after it (0 or 1).
//
// # Safety
// `opt` null or a live handle.
void strata_transaction_options_set_set_snapshot(strata_transaction_options_t *opt, unsigned char v);

// Begins an optimistic transaction on `db`: it reads at a snapshot taken now and its
// commit fails (Busy) if a key it read for update or wrote was written by another since.
// Release it with `strata_transaction_destroy` before closing `db`. Null for a null handle.
//
// # Safety
// Live `db` and `options`; `db` stays open until the transaction is destroyed.
strata_transaction_t *strata_optimistictransaction_begin(strata_t *db, const strata_writeoptions_t *options);

// Begins a pessimistic transaction on `tdb`: each write locks its key until the
// transaction ends. Release it with `strata_transaction_destroy` before closing `tdb`. Null
// for a null handle.
//
// # Safety
// Live `tdb`, `options` and `txn_options`; `tdb` stays open until the transaction is
// destroyed.
strata_transaction_t *strata_transaction_begin(strata_transactiondb_t *tdb, const strata_writeoptions_t *options, const strata_transaction_options_t *txn_options);

// Releases a transaction: a running one is rolled back, a prepared one is parked (see the
// rules at the top of the header section).
//
// # Safety
// `txn` null or a transaction handle, released once, with no live cursor.
void strata_transaction_destroy(strata_transaction_t *txn);

// Sets `key` to `value` in the transaction (a pessimistic one locks `key` first, and may
// fail with Busy or a deadlock).
//
// # Safety
// Live `txn`; `key` and `value` readable for their lengths; `errptr` as usual.
void strata_transaction_put(strata_transaction_t *txn, const char *key, size_t keylen, const char *value, size_t vallen, char **errptr);

// Removes `key` in the transaction.
//
// # Safety
// Live `txn`; `key` readable for `keylen`; `errptr` as usual.
void strata_transaction_delete(strata_transaction_t *txn, const char *key, size_t keylen, char **errptr);

// Merges `operand` into `key` in the transaction.
//
// # Safety
// Live `txn`; `key` and `operand` readable for their lengths; `errptr` as usual.
void strata_transaction_merge(strata_transaction_t *txn, const char *key, size_t keylen, const char *operand, size_t oplen, char **errptr);

// The value of `key` as the transaction sees it (its own writes over the database), as
// `strata_get`: malloc'd, length in `*vallen`, null when absent.
//
// # Safety
// Live `txn`; `key` readable for `keylen`; `vallen` valid; `errptr` as usual.
char *strata_transaction_get(strata_transaction_t *txn, const char *key, size_t keylen, size_t *vallen, char **errptr);

// As `strata_transaction_get`, and marks `key` as read for update: a pessimistic
// transaction locks it; an optimistic one's commit fails if another writes it meanwhile.
//
// # Safety
// As `strata_transaction_get`.
char *strata_transaction_get_for_update(strata_transaction_t *txn, const char *key, size_t keylen, size_t *vallen, char **errptr);

// The number of writes in the transaction (0 for null).
//
// # Safety
// `txn` null or a live handle.
size_t strata_transaction_count(strata_transaction_t *txn);

// Marks the transaction's state; `strata_transaction_rollback_to_savepoint` returns to it.
//
// # Safety
// Live `txn`; `errptr` as usual.
void strata_transaction_set_savepoint(strata_transaction_t *txn, char **errptr);

// Undoes the writes since the newest save point, and forgets it; an error if there is none.
//
// # Safety
// Live `txn`; `errptr` as usual.
void strata_transaction_rollback_to_savepoint(strata_transaction_t *txn, char **errptr);

// Commits: the writes become visible atomically (an optimistic transaction first checks
// for conflicts; nothing is written if it fails).
//
// # Safety
// Live `txn`; `errptr` as usual.
void strata_transaction_commit(strata_transaction_t *txn, char **errptr);

// Discards the transaction's writes (and a pessimistic one's locks; a prepared one's
// prepare record is rolled back too).
//
// # Safety
// Live `txn`; `errptr` as usual.
void strata_transaction_rollback(strata_transaction_t *txn, char **errptr);

// Names a pessimistic transaction for two-phase commit (a name no other transaction of the
// database holds); required before `strata_transaction_prepare`.
//
// # Safety
// Live `txn`; `name` NUL-terminated; `errptr` as usual.
void strata_transaction_set_name(strata_transaction_t *txn, const char *name, char **errptr);

// The transaction's name, malloc'd and NUL-terminated (release with `strata_free`), or
// null if it has none.
//
// # Safety
// `txn` null or a live handle.
char *strata_transaction_get_name(strata_transaction_t *txn);

// The first phase of two-phase commit: writes the transaction's batch to the WAL as
// prepared, keeping its locks; after a crash it is recovered prepared, for
// `strata_transactiondb_get_prepared_transactions`. Then commit or roll back.
//
// # Safety
// Live `txn`; `errptr` as usual.
void strata_transaction_prepare(strata_transaction_t *txn, char **errptr);

// An iterator over the transaction's view: its own writes over the database (as of its
// snapshot, if it has one), with the bounds of `options`. It follows the ordinary iterator
// rules (`strata_iter_*`, released with `strata_iter_destroy`) and does not see writes the
// transaction makes after it was created. Null and `*errptr` set on failure.
//
// # Safety
// Live `txn` and `options`; `errptr` as usual.
strata_iterator_t *strata_transaction_create_iterator(strata_transaction_t *txn, const strata_readoptions_t *options, char **errptr);

// An updatable cursor over family `cf` (the default family for a null `cf`) as the
// transaction sees it, unpositioned. While it lives, use the transaction only through it;
// destroy it with `strata_txn_cursor_destroy` before the transaction. Null and `*errptr`
// set on failure.
//
// # Safety
// Live `txn` and `options`; `cf` null or live; `errptr` as usual.
strata_txn_cursor_t *strata_transaction_create_cursor(strata_transaction_t *txn, const strata_readoptions_t *options, const strata_column_family_t *cf, char **errptr);

// As `strata_transaction_put`, in column family `cf`.
//
// # Safety
// As `strata_transaction_put`; `cf` a live family handle.
void strata_transaction_put_cf(strata_transaction_t *txn, const strata_column_family_t *cf, const char *key, size_t keylen, const char *value, size_t vallen, char **errptr);

// As `strata_transaction_delete`, in column family `cf`.
//
// # Safety
// As `strata_transaction_delete`; `cf` a live family handle.
void strata_transaction_delete_cf(strata_transaction_t *txn, const strata_column_family_t *cf, const char *key, size_t keylen, char **errptr);

// As `strata_transaction_merge`, in column family `cf`.
//
// # Safety
// As `strata_transaction_merge`; `cf` a live family handle.
void strata_transaction_merge_cf(strata_transaction_t *txn, const strata_column_family_t *cf, const char *key, size_t keylen, const char *operand, size_t oplen, char **errptr);

// As `strata_transaction_get` (or, with `for_update` 1, `strata_transaction_get_for_update`),
// in column family `cf`.
//
// # Safety
// As `strata_transaction_get`; `cf` a live family handle.
char *strata_transaction_get_cf(strata_transaction_t *txn, const strata_column_family_t *cf, const char *key, size_t keylen, unsigned char for_update, size_t *vallen, char **errptr);

// Releases a cursor; its transaction may be used again.
//
// # Safety
// `cursor` null or from `strata_transaction_create_cursor`, released once.
void strata_txn_cursor_destroy(strata_txn_cursor_t *cursor);

// 1 if the cursor is at an entry, else 0.
//
// # Safety
// `c` null or a live cursor.
unsigned char strata_txn_cursor_valid(const strata_txn_cursor_t *c);

// Moves to the first entry.
//
// # Safety
// `c` null or a live cursor.
void strata_txn_cursor_seek_to_first(strata_txn_cursor_t *c);

// Moves to the last entry.
//
// # Safety
// `c` null or a live cursor.
void strata_txn_cursor_seek_to_last(strata_txn_cursor_t *c);

// Moves to the first entry at or after `key`. A null `key` with a non-zero length is
// refused with `*errptr`, and the cursor does not move.
//
// # Safety
// `c` null or a live cursor; `key` readable for `klen`; `errptr` as usual.
void strata_txn_cursor_seek(strata_txn_cursor_t *c, const char *key, size_t klen, char **errptr);

// Moves to the last entry at or before `key`; errors as `strata_txn_cursor_seek`.
//
// # Safety
// As `strata_txn_cursor_seek`.
void strata_txn_cursor_seek_for_prev(strata_txn_cursor_t *c, const char *key, size_t klen, char **errptr);

// Moves to the next entry (if valid).
//
// # Safety
// `c` null or a live cursor.
void strata_txn_cursor_next(strata_txn_cursor_t *c);

// Moves to the previous entry (if valid).
//
// # Safety
// `c` null or a live cursor.
void strata_txn_cursor_prev(strata_txn_cursor_t *c);

// The current key, length in `*klen`, valid until the cursor moves or changes the entry;
// null with `*klen` 0 when not valid.
//
// # Safety
// `c` null or a live cursor; `klen` a valid pointer.
const char *strata_txn_cursor_key(const strata_txn_cursor_t *c, size_t *klen);

// The current value, length in `*vlen`, valid as the key of `strata_txn_cursor_key`.
//
// # Safety
// `c` null or a live cursor; `vlen` a valid pointer.
const char *strata_txn_cursor_value(const strata_txn_cursor_t *c, size_t *vlen);

// Sets the current entry's value in the transaction; the cursor stays on the entry and
// shows the new value. An error if the cursor is not valid.
//
// # Safety
// Live `c`; `value` readable for `vallen`; `errptr` as usual.
void strata_txn_cursor_update(strata_txn_cursor_t *c, const char *value, size_t vallen, char **errptr);

// Deletes the current entry in the transaction; the cursor stays on its key, with an empty
// value, until it moves. An error if the cursor is not valid.
//
// # Safety
// Live `c`; `errptr` as usual.
void strata_txn_cursor_delete(strata_txn_cursor_t *c, char **errptr);

// Sets `*errptr` if the cursor stopped on a read error.
//
// # Safety
// `c` null or a live cursor; `errptr` as usual.
void strata_txn_cursor_get_error(const strata_txn_cursor_t *c, char **errptr);

// The batches written from sequence number `seq_number` on, oldest first, the first being
// the batch holding `seq_number` (or the first after it); the feed ends at the last write
// published at the call. `options` must be null. A `seq_number` older than every WAL kept
// fails (`NotFound`) naming the oldest sequence number still available; a closed or null
// database fails too. Destroy the iterator with `strata_wal_iter_destroy`.
//
// # Safety
// `db` null or a live handle; `options` null; `errptr` as usual.
strata_wal_iterator_t *strata_get_updates_since(strata_t *db, uint64_t seq_number, const strata_wal_readoptions_t *options, char **errptr);

// Whether the iterator is on a batch: 0 at the end of the feed, after a read error (see
// `strata_wal_iter_status`) and for a null iterator.
//
// # Safety
// `iter` null or a live WAL iterator.
unsigned char strata_wal_iter_valid(const strata_wal_iterator_t *iter);

// Moves to the next batch; nothing for a null or invalid iterator.
//
// # Safety
// `iter` null or a live WAL iterator used by no other thread during the call.
void strata_wal_iter_next(strata_wal_iterator_t *iter);

// Sets `*errptr` to the read error that ended the feed, if any (or to an error for a null
// iterator); leaves it alone otherwise.
//
// # Safety
// `iter` null or a live WAL iterator; `errptr` as usual.
void strata_wal_iter_status(const strata_wal_iterator_t *iter, char **errptr);

// A copy of the batch the iterator is on, the caller's to destroy with
// `strata_writebatch_destroy`; `*seq` (if `seq` is not null) gets its first sequence
// number. Null, with `*seq` 0, for a null or invalid iterator.
//
// # Safety
// `iter` null or a live WAL iterator; `seq` null or writable.
strata_writebatch_t *strata_wal_iter_get_batch(const strata_wal_iterator_t *iter, uint64_t *seq);

// Releases a WAL iterator (and the WAL files it holds open).
//
// # Safety
// `iter` null or a handle from `strata_get_updates_since`, released once.
void strata_wal_iter_destroy(strata_wal_iterator_t *iter);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* STRATA_H */
