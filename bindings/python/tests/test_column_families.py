"""Column families and merge operators."""

import struct

import pytest

import strata


def test_create_use_drop(db):
    assert db.column_families() == ["default"]
    users = db.create_column_family("users", write_buffer_size=1 << 20)
    assert users.name == "users"
    assert db.column_families() == ["default", "users"]
    users[b"alice"] = b"1"
    db[b"alice"] = b"default"
    assert users[b"alice"] == b"1"
    assert db[b"alice"] == b"default"
    assert b"alice" in users
    assert users.get(b"bob") is None
    with pytest.raises(KeyError):
        users[b"bob"]
    users.put(b"bob", b"2")
    assert list(users.items()) == [(b"alice", b"1"), (b"bob", b"2")]
    assert list(users.keys(reverse=True)) == [b"bob", b"alice"]
    assert list(users.values(end=b"b")) == [b"1"]
    assert list(users) == [b"alice", b"bob"]
    del users[b"alice"]
    users.delete(b"bob")
    assert list(users) == []
    users[b"x"] = b"y"
    users.flush()
    users.compact_range()
    assert users.property("strata.num-files-at-level0") is not None
    assert users.stats()
    db.drop_column_family("users")
    assert users.dropped
    assert db.column_families() == ["default"]
    with pytest.raises(strata.Error):
        users[b"x"] = b"y"


def test_column_family_lookup(db):
    db.create_column_family("a")
    assert db.column_family("a").name == "a"
    with pytest.raises(strata.NotFound):
        db.column_family("nope")
    with pytest.raises(strata.NotFound):
        db.drop_column_family("nope")
    with pytest.raises(strata.InvalidArgument):
        db.create_column_family("a")


def test_families_survive_reopen(path):
    with strata.open(path) as db:
        db.create_column_family("logs")[b"k"] = b"v"
    assert strata.list_column_families(path) == ["default", "logs"]
    # Families not named are opened too.
    with strata.open(path) as db:
        assert db.column_family("logs")[b"k"] == b"v"
    with strata.open(path, column_families={"logs": {"compression": "lz4"}, "new": {}}) as db:
        assert db.column_families() == ["default", "logs", "new"]
        assert db.column_family("logs")[b"k"] == b"v"


def test_open_with_missing_family_refused_without_create(path):
    strata.open(path).close()
    with pytest.raises(strata.InvalidArgument):
        strata.open(path, column_families={"x": {}}, create_missing_column_families=False)


def test_list_column_families_of_nothing(path):
    with pytest.raises(strata.NotFound):
        strata.list_column_families(path)


def test_batch_across_families(db):
    cf = db.create_column_family("cf")
    with db.write_batch() as batch:
        batch.put(b"k", b"default")
        batch.put(b"k", b"cf", column_family=cf)
        batch.put(b"k2", b"cf-by-name", column_family="cf")
    assert db[b"k"] == b"default"
    assert cf[b"k"] == b"cf"
    assert cf[b"k2"] == b"cf-by-name"
    with cf.write_batch() as batch:
        batch[b"k3"] = b"3"
        batch.delete(b"k")
    assert cf[b"k3"] == b"3"
    assert b"k" not in cf
    assert db[b"k"] == b"default"
    with pytest.raises(strata.NotFound):
        db.write_batch().put(b"a", b"b", column_family="nope")


def test_snapshot_of_a_family(db):
    cf = db.create_column_family("cf")
    cf[b"a"] = b"1"
    snap = cf.snapshot()
    cf[b"a"] = b"2"
    assert snap[b"a"] == b"1"
    whole = db.snapshot()
    cf[b"a"] = b"3"
    assert whole.column_family("cf")[b"a"] == b"2"


def u64(n):
    return struct.pack("<Q", n)


def test_merge_uint64add(path):
    with strata.open(path, merge_operator="uint64add") as db:
        db.merge(b"counter", u64(1))
        db.merge(b"counter", u64(41))
        assert db[b"counter"] == u64(42)
        db.flush()
        db.merge(b"counter", u64(8))
        assert struct.unpack("<Q", db[b"counter"])[0] == 50
        with db.write_batch() as batch:
            batch.merge(b"counter", u64(50))
        assert db[b"counter"] == u64(100)


def test_merge_stringappend(path):
    with strata.open(path, merge_operator="stringappend") as db:
        db[b"list"] = b"a"
        db.merge(b"list", b"b")
        db.merge(b"list", b"c", sync=True)
        assert db[b"list"] == b"a,b,c"


def test_merge_without_operator_refused(db):
    with pytest.raises(strata.InvalidArgument):
        db.merge(b"k", b"v")


def test_family_merge_operator(db):
    counters = db.create_column_family("counters", merge_operator="uint64add")
    counters.merge(b"hits", u64(2))
    counters.merge(b"hits", u64(3))
    assert counters[b"hits"] == u64(5)
    with pytest.raises(strata.InvalidArgument):
        db.merge(b"hits", u64(1))


def test_unknown_merge_operator(path):
    with pytest.raises(ValueError, match="merge operator"):
        strata.open(path, merge_operator="max")
