"""Range deletions: Db, ColumnFamily and WriteBatch, checked against a dict."""

import random

import pytest

import strata


def contents(view):
    return dict(view.items())


def test_delete_range_removes_the_half_open_range(db):
    for i in range(10):
        db[b"k%d" % i] = b"v%d" % i
    snap = db.snapshot()
    db.delete_range(b"k3", b"k7", sync=True)
    assert list(db.keys()) == [b"k0", b"k1", b"k2", b"k7", b"k8", b"k9"]
    # A snapshot from before still reads the deleted keys.
    assert snap[b"k5"] == b"v5"
    # A put after the range deletion is not covered by it.
    db[b"k5"] = b"again"
    assert db[b"k5"] == b"again"
    # begin == end writes nothing; a range over no key is no error.
    db.delete_range(b"k8", b"k8")
    db.delete_range(b"x", b"y")
    assert b"k8" in db


def test_begin_after_end_is_refused_naming_both_keys_and_writes_nothing(db):
    db[b"a"] = b"1"
    with pytest.raises(strata.InvalidArgument, match="begin key 'z' is after end key 'a'"):
        db.delete_range(b"z", b"a")
    batch = db.write_batch()
    batch[b"b"] = b"2"
    batch.delete_range(b"m", b"c")
    with pytest.raises(strata.InvalidArgument, match="'m' is after end key 'c'"):
        batch.write()
    assert contents(db) == {b"a": b"1"}


def test_order_inside_a_batch_and_families(db):
    cf = db.create_column_family("cf")
    for k in (b"a", b"b", b"c"):
        db[k] = b"default"
        cf[k] = b"cf"
    with db.write_batch() as batch:
        # The range deletion covers the put before it, not the one after it.
        batch.put(b"a", b"new")
        batch.delete_range(b"a", b"c")
        batch.put(b"b", b"after")
        batch.delete_range(b"b", b"d", column_family="cf")
    assert contents(db) == {b"b": b"after", b"c": b"default"}
    assert contents(cf) == {b"a": b"cf"}
    cf.delete_range(b"", b"\xff")
    assert contents(cf) == {}
    # A batch made by the family writes to it by default.
    cf[b"q"] = b"1"
    with cf.write_batch() as batch:
        batch.delete_range(b"q", b"r")
    assert contents(cf) == {}
    db.drop_column_family("cf")
    with pytest.raises(strata.InvalidArgument, match="dropped"):
        cf.delete_range(b"a", b"b")


def test_random_operations_agree_with_a_dict_across_flushes_and_reopens(path):
    rng = random.Random(7)
    model = {}
    db = strata.open(path)
    try:
        for step in range(1500):
            key = b"k%03d" % rng.randrange(200)
            choice = rng.randrange(10)
            if choice < 5:
                value = b"v%d" % step
                db[key] = value
                model[key] = value
            elif choice < 7:
                end = b"k%03d" % rng.randrange(200)
                if key > end:
                    with pytest.raises(strata.InvalidArgument):
                        db.delete_range(key, end)
                    continue
                db.delete_range(key, end)
                model = {k: v for k, v in model.items() if not key <= k < end}
            elif choice == 7:
                db.delete(key)
                model.pop(key, None)
            elif choice == 8:
                assert db.get(key) == model.get(key)
            elif step % 5 == 0:
                db.close()
                db = strata.open(path)
            else:
                db.flush()
            if step % 100 == 0:
                assert contents(db) == model
        db.compact_range()
        assert contents(db) == model
    finally:
        db.close()
