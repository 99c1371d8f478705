"""open, get/put/delete, the mapping protocol, bytes-only keys, errors, reopen, close."""

import pytest

import strata


def test_put_get_delete(db):
    db[b"apple"] = b"red"
    assert db[b"apple"] == b"red"
    assert db.get(b"apple") == b"red"
    assert b"apple" in db
    del db[b"apple"]
    assert b"apple" not in db
    assert db.get(b"apple") is None


def test_missing_key_raises_key_error(db):
    with pytest.raises(KeyError) as info:
        db[b"nope"]
    assert info.value.args[0] == b"nope"


def test_get_default(db):
    assert db.get(b"nope", b"fallback") == b"fallback"
    assert db.get(b"nope", default=None) is None


def test_deleting_a_missing_key_is_fine(db):
    del db[b"never-written"]
    db.delete(b"never-written")


def test_put_and_delete_methods_with_sync(db):
    db.put(b"k", b"v", sync=True)
    assert db[b"k"] == b"v"
    db.delete(b"k", sync=True)
    assert b"k" not in db


def test_empty_key_and_value(db):
    db[b""] = b""
    assert db[b""] == b""


def test_bytearray_and_memoryview_accepted(db):
    db[bytearray(b"ba")] = memoryview(b"mv")
    assert db[b"ba"] == b"mv"
    assert db[memoryview(b"ba")] == b"mv"
    assert bytearray(b"ba") in db


def test_values_are_bytes(db):
    db[b"k"] = bytearray(b"v")
    assert type(db[b"k"]) is bytes


@pytest.mark.parametrize(
    "call",
    [
        lambda db: db.__setitem__("k", b"v"),
        lambda db: db.__setitem__(b"k", "v"),
        lambda db: db["k"],
        lambda db: db.get("k"),
        lambda db: "k" in db,
        lambda db: db.__delitem__("k"),
        lambda db: db.items(start="a"),
    ],
)
def test_str_refused_with_hint(db, call):
    with pytest.raises(TypeError, match="encode"):
        call(db)


def test_other_types_refused(db):
    with pytest.raises(TypeError, match="bytes, bytearray or memoryview"):
        db[1] = b"v"


def test_no_len(db):
    with pytest.raises(TypeError):
        len(db)


def test_reopen_keeps_data(path):
    db = strata.open(path)
    for i in range(100):
        db[b"k%03d" % i] = b"v%d" % i
    db.close()
    db = strata.open(path)
    assert db[b"k042"] == b"v42"
    assert len(list(db)) == 100
    db.close()


def test_reopen_after_flush(path):
    with strata.open(path, write_buffer_size=64 * 1024) as db:
        for i in range(2000):
            db[b"k%05d" % i] = b"x" * 100
        db.flush()
    with strata.open(path) as db:
        assert db[b"k01999"] == b"x" * 100


def test_context_manager_closes(path):
    with strata.open(path) as db:
        db[b"a"] = b"1"
    assert db.closed
    with pytest.raises(strata.Unavailable, match="closed"):
        db[b"a"]
    with pytest.raises(strata.Unavailable):
        db[b"a"] = b"2"


def test_close_twice(path):
    db = strata.open(path)
    db.close()
    db.close()


def test_iterator_after_close_raises(path):
    db = strata.open(path)
    for i in range(100):
        db[b"%03d" % i] = b""
    it = iter(db)
    next(it)
    db.close()
    with pytest.raises(strata.Unavailable):
        list(it)


def test_missing_database_without_create(path):
    with pytest.raises(strata.NotFound):
        strata.open(path, create_if_missing=False)


def test_error_if_exists(path):
    strata.open(path).close()
    with pytest.raises(strata.InvalidArgument):
        strata.open(path, error_if_exists=True)


def test_second_handle_is_busy(db, path):
    with pytest.raises(strata.Busy):
        strata.open(path)


def test_read_only(path):
    with strata.open(path) as db:
        db[b"a"] = b"1"
    with strata.open(path, read_only=True) as db:
        assert db.read_only
        assert db[b"a"] == b"1"
        with pytest.raises(strata.Unavailable, match="read-only"):
            db[b"b"] = b"2"


def test_read_only_beside_a_writer(db, path):
    db[b"a"] = b"1"
    with strata.open(path, read_only=True) as ro:
        assert ro[b"a"] == b"1"


def test_error_hierarchy():
    for cls in (
        strata.NotFound,
        strata.Corruption,
        strata.InvalidArgument,
        strata.Busy,
        strata.Unavailable,
        strata.IOError,
    ):
        assert issubclass(cls, strata.Error)
        assert cls.__module__ == "strata"
    assert issubclass(strata.Error, Exception)


def test_options(path):
    with strata.open(
        path,
        write_buffer_size=1 << 20,
        compression="zstd",
        bottommost_compression="lz4",
        bloom_bits_per_key=0,
        block_cache_size=0,
        max_background_jobs=3,
        compaction_style="universal",
        merge_operator=None,
        block_size=8192,
        disable_auto_compactions=True,
        read_triggered_compaction=False,
        wal_recovery_mode="point_in_time",
        max_open_files=-1,
    ) as db:
        db[b"a"] = b"1"
        db.flush()
        assert db[b"a"] == b"1"
    with pytest.raises(strata.InvalidArgument, match="max_open_files"):
        strata.open(path, max_open_files=0)


def test_blob_file_options(path):
    big = b"x" * 4096
    with strata.open(
        path,
        enable_blob_files=True,
        min_blob_size=1024,
        blob_file_size=1 << 20,
        blob_separation_at_write=True,
        enable_blob_garbage_collection=True,
        blob_garbage_collection_age_cutoff=0.5,
        blob_garbage_collection_force_threshold=0.9,
    ) as db:
        for i in range(100):
            db[b"%03d" % i] = big
        db[b"small"] = b"s"
        db.flush()
        assert db.property("strata.num-blob-files") == "1"
        assert db[b"050"] == big
        assert db[b"small"] == b"s"
    with pytest.raises(strata.InvalidArgument, match="blob_garbage_collection_age_cutoff"):
        strata.open(path, blob_garbage_collection_age_cutoff=2.0)


def test_direct_io_options(path):
    with strata.open(
        path,
        use_direct_reads=True,
        use_direct_io_for_flush_and_compaction=True,
        compaction_readahead_size=1 << 20,
    ) as db:
        for i in range(1000):
            db[b"%04d" % i] = b"v" * 100
        db.flush()
        db.compact_range()
        assert db[b"0500"] == b"v" * 100
    with strata.open(path, allow_mmap_reads=True) as db:
        assert db[b"0999"] == b"v" * 100
    with pytest.raises(strata.InvalidArgument, match="allow_mmap_reads"):
        strata.open(path, allow_mmap_reads=True, use_direct_reads=True)


def test_memtable_bloom_options(path):
    with strata.open(
        path, memtable_prefix_bloom_size_ratio=0.1, memtable_whole_key_filtering=True
    ) as db:
        db[b"here"] = b"1"
        assert db[b"here"] == b"1"
        assert db.get(b"absent") is None
    with pytest.raises(strata.InvalidArgument, match="memtable_prefix_bloom_size_ratio"):
        strata.open(path, memtable_prefix_bloom_size_ratio=0.5)


@pytest.mark.parametrize("ratio", [0.25, 0.0])
def test_memtable_point_index_option(path, ratio):
    # 1,000 keys: past the 256 entries after which a memtable makes its index.
    keys = [b"k%05d" % ((i * 7919) % 1000) for i in range(1000)]
    with strata.open(path, memtable_point_index_ratio=ratio) as db:
        for i, key in enumerate(keys):
            db[key] = b"v%d" % i
        assert [db[key] for key in keys] == [b"v%d" % i for i in range(1000)]
        assert db.get(b"absent") is None
    with pytest.raises(strata.InvalidArgument, match="memtable_point_index_ratio"):
        strata.open(path, memtable_point_index_ratio=0.75)


def test_partitioned_index_and_filter_options(path):
    with strata.open(
        path,
        index_type="two_level_index_search",
        partition_filters=True,
        metadata_block_size=256,
        block_size=256,
        cache_index_and_filter_blocks=True,
        pin_top_level_index_and_filter=False,
        pin_l0_filter_and_index_blocks_in_cache=True,
        prepopulate_block_cache="flush_only",
        warm_compaction_outputs=False,
        block_cache_size=64 << 10,
    ) as db:
        for i in range(3000):
            db[b"key%06d" % i] = b"value%d" % i
        db.flush()
        assert db[b"key001234"] == b"value1234"
        assert db.get(b"key001234x") is None
        assert sum(1 for _ in db.items()) == 3000
    with pytest.raises(strata.InvalidArgument, match="partition_filters"):
        strata.open(path, partition_filters=True)
    with pytest.raises(ValueError, match="index_type"):
        strata.open(path, index_type="hash_search")
    with pytest.raises(ValueError, match="prepopulate_block_cache"):
        strata.open(path, prepopulate_block_cache="always")


def test_block_cut_and_uncaching_options(path):
    # Deleted tables' blocks leave the cache with uncache_aggressiveness, stay without.
    usage = {}
    for aggressiveness in (0, 10000):
        with strata.open(
            f"{path}-{aggressiveness}",
            block_size=1024,
            block_size_deviation=100,
            uncache_aggressiveness=aggressiveness,
            disable_auto_compactions=True,
            write_buffer_size=64 << 10,
        ) as db:
            for round in range(2):
                for i in range(3000):
                    db[b"key%06d" % i] = b"value%d-%d" % (i, round)
                db.flush()
            for i in range(3000):
                assert db[b"key%06d" % i] == b"value%d-1" % i
            before = int(db.property("strata.block-cache-usage"))
            db.compact_range()
            usage[aggressiveness] = (before, int(db.property("strata.block-cache-usage")))
    assert usage[0][1] > usage[0][0]
    assert usage[10000][1] < usage[0][1] * 3 // 4
    with pytest.raises(strata.InvalidArgument, match="block_size_deviation"):
        strata.open(path, block_size_deviation=101)


def test_data_block_hash_index_options(path):
    with strata.open(
        path,
        data_block_index_type="binary_and_hash",
        data_block_hash_table_util_ratio=0.5,
        block_size=256,
    ) as db:
        for i in range(3000):
            db[b"key%06d" % i] = b"value%d" % i
        db.flush()
        assert db[b"key001234"] == b"value1234"
        assert db.get(b"key001234x") is None
        assert sum(1 for _ in db.items()) == 3000
    with pytest.raises(strata.InvalidArgument, match="data_block_hash_table_util_ratio"):
        strata.open(
            path,
            data_block_index_type="binary_and_hash",
            data_block_hash_table_util_ratio=0.0,
        )
    with pytest.raises(ValueError, match="data_block_index_type"):
        strata.open(path, data_block_index_type="hash")


def test_unknown_option(path):
    with pytest.raises(TypeError, match="unknown option 'no_such_option'"):
        strata.open(path, no_such_option=1)


def test_bad_option_values(path):
    with pytest.raises(ValueError, match="compression"):
        strata.open(path, compression="gzip")
    with pytest.raises(ValueError, match="compaction_style"):
        strata.open(path, compaction_style="fifo")
    with pytest.raises(ValueError, match="write_buffer_size"):
        strata.open(path, write_buffer_size="big")
    with pytest.raises(strata.InvalidArgument):
        strata.open(path, num_levels=1)


def test_pathlike_and_str_paths(path):
    with strata.open(str(path)) as db:
        db[b"a"] = b"1"
        assert str(db.path) == str(path)
    with strata.open(path) as db:
        assert db[b"a"] == b"1"


def test_flush_compact_stats_property(db):
    for i in range(1000):
        db[b"%05d" % i] = b"v" * 50
    db.flush()
    db.compact_range()
    db.compact_range(b"00100", b"00200")
    stats = db.stats()
    assert isinstance(stats, str) and stats
    assert db.property("strata.last-sequence") == "1000"
    assert db.property("no.such.property") is None
    assert db.property("strata.num-files-at-level0") is not None
    db.sync_wal()


def test_repr(db):
    assert "strata.Db" in repr(db)
