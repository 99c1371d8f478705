"""multi_get: one answer per key, in the keys' order, from one moment."""

import pytest

import strata


def test_values_in_the_order_of_the_keys_with_missing_ones_default(db):
    db[b"a"] = b"1"
    db[b"c"] = b"3"
    assert db.multi_get([b"c", b"missing", b"a", b"c"]) == [b"3", None, b"1", b"3"]
    assert db.multi_get([b"x", b"a"], b"none") == [b"none", b"1"]
    assert db.multi_get([b"x"], default=0) == [0]
    assert db.multi_get([]) == []


def test_any_iterable_and_bytes_like_keys(db):
    db[b"a"] = b"1"
    db[b"b"] = b"2"
    keys = (k for k in [bytearray(b"b"), memoryview(b"a")])
    assert db.multi_get(keys) == [b"2", b"1"]
    assert db.multi_get((b"a",)) == [b"1"]


def test_a_deleted_key_is_missing(db):
    db[b"a"] = b"1"
    del db[b"a"]
    db.flush()
    assert db.multi_get([b"a"]) == [None]


def test_through_a_column_family(path):
    db = strata.open(path, column_families={"cf": {}})
    cf = db.column_family("cf")
    cf[b"k"] = b"in cf"
    db[b"k"] = b"in default"
    assert cf.multi_get([b"k", b"x"]) == [b"in cf", None]
    assert db.multi_get([b"k"]) == [b"in default"]
    db.close()


def test_through_a_snapshot(db):
    db[b"a"] = b"old"
    with db.snapshot() as snap:
        db[b"a"] = b"new"
        db[b"b"] = b"new"
        assert snap.multi_get([b"a", b"b"]) == [b"old", None]
        assert snap.column_family("default").multi_get([b"a"]) == [b"old"]
    assert db.multi_get([b"a", b"b"]) == [b"new", b"new"]


@pytest.mark.parametrize(
    "keys, match",
    [
        (b"ab", "keys must be an iterable of keys, not one bytes"),
        ("ab", "keys must be an iterable of keys, not one str"),
        (5, "keys must be an iterable of keys \\(bytes\\), not int"),
        ([b"a", "b"], "keys\\[1\\] must be bytes, not str"),
        ([b"a", b"b", 3], "keys\\[2\\] must be bytes, bytearray or memoryview, not int"),
    ],
)
def test_wrong_key_types_name_the_argument(db, keys, match):
    with pytest.raises(TypeError, match=match):
        db.multi_get(keys)


def test_a_closed_database_is_unavailable(path):
    db = strata.open(path)
    db.close()
    with pytest.raises(strata.Unavailable):
        db.multi_get([b"a"])
