"""Iteration: key order, ranges with an exclusive end, both directions, laziness."""

import pytest

KEYS = [b"%03d" % i for i in range(0, 200, 2)]  # 000, 002, ..., 198


@pytest.fixture
def filled(db):
    for k in KEYS:
        db[k] = b"v" + k
    return db


def test_iterates_keys_in_order(filled):
    assert list(filled) == KEYS


def test_items_keys_values(filled):
    assert list(filled.items()) == [(k, b"v" + k) for k in KEYS]
    assert list(filled.keys()) == KEYS
    assert list(filled.values()) == [b"v" + k for k in KEYS]


def test_range_end_exclusive(filled):
    assert list(filled.keys(start=b"010", end=b"020")) == [
        b"010",
        b"012",
        b"014",
        b"016",
        b"018",
    ]
    # A start between keys begins at the next one.
    assert list(filled.keys(b"011", b"016")) == [b"012", b"014"]


def test_open_sides(filled):
    assert list(filled.keys(end=b"006")) == [b"000", b"002", b"004"]
    assert list(filled.keys(start=b"194")) == [b"194", b"196", b"198"]


def test_reverse(filled):
    assert list(filled.keys(reverse=True)) == KEYS[::-1]
    assert list(filled.keys(b"010", b"020", reverse=True)) == [
        b"018",
        b"016",
        b"014",
        b"012",
        b"010",
    ]
    assert list(filled.items(start=b"194", reverse=True)) == [
        (b"198", b"v198"),
        (b"196", b"v196"),
        (b"194", b"v194"),
    ]
    assert list(filled.values(end=b"004", reverse=True)) == [b"v002", b"v000"]


def test_empty_ranges(filled):
    assert list(filled.keys(b"500")) == []
    assert list(filled.keys(b"020", b"020")) == []
    assert list(filled.keys(b"030", b"020", reverse=True)) == []


def test_iteration_sees_the_moment_it_started(filled):
    it = filled.keys()
    first = next(it)
    filled[b"001"] = b"new"
    del filled[b"198"]
    rest = list(it)
    assert [first] + rest == KEYS


def test_iterator_is_its_own_iterator(filled):
    it = filled.items()
    assert iter(it) is it


def test_iterates_across_flushed_tables_and_memtable(db):
    for i in range(0, 3000, 3):
        db[b"%05d" % i] = b"a"
    db.flush()
    for i in range(1, 3000, 3):
        db[b"%05d" % i] = b"b"
    db.flush()
    for i in range(2, 3000, 3):
        db[b"%05d" % i] = b"c"
    for i in range(0, 3000, 30):
        del db[b"%05d" % i]
    expected = [b"%05d" % i for i in range(3000) if i % 30 != 0]
    assert list(db) == expected
    assert list(db.keys(reverse=True)) == expected[::-1]


def test_large_scan_in_batches(db):
    n = 5000
    batch = db.write_batch()
    for i in range(n):
        batch.put(b"%06d" % i, b"x" * 10)
    batch.write()
    count = sum(1 for _ in db.items())
    assert count == n
