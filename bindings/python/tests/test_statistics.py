"""Statistics and properties."""

import strata


def test_statistics_count_and_reset(db):
    stats = db.statistics()
    assert stats["keys_written"] == 0
    db[b"a"] = b"1"
    db[b"b"] = b"2"
    assert db.get(b"a") == b"1"
    assert db.get(b"zz") is None
    stats = db.statistics()
    assert stats["keys_written"] == 2
    assert stats["gets"] == 2 and stats["gets_found"] == 1
    assert stats["active_memtable_entries"] == 2
    db.flush()
    assert db.statistics()["flushes"] == 1
    db.reset_statistics()
    stats = db.statistics()
    assert stats["keys_written"] == 0 and stats["flushes"] == 0
    assert stats["last_sequence"] >= 2  # a gauge, not a counter


def test_properties(db):
    db[b"a"] = b"1"
    db.flush()
    assert db.property("strata.num-files-at-level0") == "1"
    assert "strata" in db.stats().lower() or db.stats()
    assert db.property("strata.no-such-property") is None


def test_manual_compactions(db):
    for i in range(3):
        db[b"k%d" % i] = b"v"
        db.flush()
    assert db.property("strata.num-files-at-level0") == "3"
    db.compact_level(0)
    assert db.property("strata.num-files-at-level0") == "0"
    db[b"x"] = b"1"
    db.compact_all()
    db.wait_for_compactions()
    assert db.property("strata.num-files-at-level0") == "0"
    assert db[b"x"] == b"1" and db[b"k2"] == b"v"


def test_universal_compaction_settings_and_the_tree_shape(path):
    with strata.open(
        path,
        compaction_style="universal",
        universal_size_ratio=10,
        universal_min_merge_width=2,
        universal_max_merge_width=8,
        universal_max_size_amplification_percent=150,
    ) as db:
        for i in range(4):
            db[b"u"] = b"%d" % i
            db.flush()
        db.compact_all()
        assert db[b"u"] == b"3"
        assert db.tree_shape()


def test_statistics_are_the_engines_named_list(db):
    # The names come from the engine's one list (DbStats::iter), shared with the C API:
    # counters, gauges, and the estimates added with the RocksDB properties.
    names = set(db.statistics())
    for name in ["keys_written", "gets", "flushes", "stall_micros", "compactions_running",
                 "flushes_running", "estimated_keys", "table_bytes"]:
        assert name in names, name
    db[b"a"] = b"1"
    db.flush()
    assert db.statistics()["estimated_keys"] == 1
    assert db.property("rocksdb.estimate-num-keys") == "1"
    assert db.property("strata.estimate-num-keys") == "1"
