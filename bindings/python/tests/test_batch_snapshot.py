"""Write batches (atomic, rolled back on exception) and snapshots."""

import gc

import pytest

import strata


def test_batch_context_manager_writes_on_exit(db):
    db[b"gone"] = b"x"
    with db.write_batch() as batch:
        batch[b"a"] = b"1"
        batch.put(b"b", b"2")
        del batch[b"gone"]
        assert len(batch) == 3
        # Nothing is visible before the block ends.
        assert b"a" not in db
    assert db[b"a"] == b"1"
    assert db[b"b"] == b"2"
    assert b"gone" not in db


def test_batch_discarded_on_exception(db):
    db[b"keep"] = b"old"
    with pytest.raises(RuntimeError, match="boom"):
        with db.write_batch() as batch:
            batch[b"a"] = b"1"
            batch[b"keep"] = b"new"
            raise RuntimeError("boom")
    assert b"a" not in db
    assert db[b"keep"] == b"old"


def test_batch_write_empties_it_for_reuse(db):
    batch = db.write_batch()
    batch[b"a"] = b"1"
    batch.write(sync=True)
    assert len(batch) == 0
    batch[b"b"] = b"2"
    batch.clear()
    batch.write()
    assert db[b"a"] == b"1"
    assert b"b" not in db


def test_batch_refuses_str(db):
    batch = db.write_batch()
    with pytest.raises(TypeError, match="encode"):
        batch[b"a"] = "1"


def test_batch_on_closed_db(path):
    db = strata.open(path)
    batch = db.write_batch()
    batch[b"a"] = b"1"
    db.close()
    with pytest.raises(strata.Unavailable):
        batch.write()


def test_snapshot_reads_the_past(db):
    db[b"a"] = b"1"
    db[b"b"] = b"1"
    snap = db.snapshot()
    db[b"a"] = b"2"
    del db[b"b"]
    db[b"c"] = b"3"
    assert snap[b"a"] == b"1"
    assert snap.get(b"b") == b"1"
    assert b"c" not in snap
    assert snap.get(b"c", b"none") == b"none"
    with pytest.raises(KeyError):
        snap[b"c"]
    assert list(snap.items()) == [(b"a", b"1"), (b"b", b"1")]
    assert list(snap.keys(reverse=True)) == [b"b", b"a"]
    assert list(snap.values(start=b"b")) == [b"1"]
    assert list(snap) == [b"a", b"b"]
    assert snap.sequence > 0
    snap.close()


def test_snapshot_survives_flush_and_compaction(db):
    for i in range(100):
        db[b"%03d" % i] = b"old"
    snap = db.snapshot()
    for i in range(100):
        db[b"%03d" % i] = b"new"
    db.flush()
    db.compact_range()
    assert snap[b"050"] == b"old"
    assert db[b"050"] == b"new"
    snap.close()


def test_snapshot_close_and_context_manager(db):
    with db.snapshot() as snap:
        assert db.property("strata.num-snapshots") == "1"
    assert db.property("strata.num-snapshots") == "0"
    with pytest.raises(strata.Unavailable, match="snapshot is closed"):
        snap[b"a"]
    snap.close()  # twice is fine


def test_snapshot_released_by_gc(db):
    snap = db.snapshot()
    assert db.property("strata.num-snapshots") == "1"
    del snap
    gc.collect()
    assert db.property("strata.num-snapshots") == "0"


def test_snapshot_iterator_outlives_close(db):
    db[b"a"] = b"1"
    snap = db.snapshot()
    it = snap.items()
    snap.close()
    db[b"a"] = b"2"
    assert list(it) == [(b"a", b"1")]
