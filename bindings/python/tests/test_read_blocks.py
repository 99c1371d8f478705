"""`fill_cache` and `verify_checksums` on walks and point reads: a read that does not fill
the cache leaves it as it was; one that does not verify returns a damaged value that a
verifying read reports as corruption."""

import pytest

import strata

KEYS = 2000


def key(i):
    return b"key%05d" % i


def value(i):
    return b"value-of-%05d-" % i + b"v" * 80


def build(path):
    db = strata.open(path, compression="none", block_cache_size=64 << 20)
    for i in range(KEYS):
        db[key(i)] = value(i)
    db.flush()
    db.close()


def cache_usage(db):
    return int(db.property("strata.block-cache-usage"))


def damage_value_of(path, i):
    """Flips a bit of the value of key i in its table; returns the damaged value."""
    needle = value(i)
    for table in path.glob("*.sst"):
        data = bytearray(table.read_bytes())
        at = data.find(needle)
        if at >= 0:
            data[at + 3] ^= 0x20
            table.write_bytes(bytes(data))
            break
    else:
        pytest.fail("no table holds the value")
    damaged = bytearray(needle)
    damaged[3] ^= 0x20
    return bytes(damaged)


def test_a_walk_that_does_not_fill_the_cache_leaves_it_as_it_was(path):
    build(path)
    db = strata.open(path, compression="none", block_cache_size=64 << 20)
    try:
        before = cache_usage(db)
        assert len(list(db.items(fill_cache=False))) == KEYS
        assert len(list(db.values(fill_cache=False, verify_checksums=False))) == KEYS
        assert cache_usage(db) == before
        assert len(list(db.keys())) == KEYS
        assert cache_usage(db) > before
    finally:
        db.close()


def test_a_damaged_value_is_reported_only_by_walks_that_verify(path):
    build(path)
    damaged = damage_value_of(path, 7)
    db = strata.open(path, compression="none", block_cache_size=64 << 20)
    try:
        walk = db.items(key(7), fill_cache=False, verify_checksums=False)
        assert next(iter(walk)) == (key(7), bytes(damaged))
        with pytest.raises(strata.Corruption):
            next(iter(db.items(key(7))))
    finally:
        db.close()


def test_point_reads_that_do_not_fill_the_cache_leave_it_as_it_was(path):
    build(path)
    db = strata.open(path, compression="none", block_cache_size=64 << 20)
    try:
        snap = db.snapshot()
        before = cache_usage(db)
        keys = [key(i) for i in range(0, KEYS, 7)]
        for reads in (db, snap):
            assert reads.get(key(3), fill_cache=False) == value(3)
            assert reads.get(b"absent", b"none", fill_cache=False) == b"none"
            assert reads.multi_get(keys, fill_cache=False, verify_checksums=False) == [
                value(i) for i in range(0, KEYS, 7)
            ]
        assert cache_usage(db) == before
        assert db.get(key(3)) == value(3)
        assert cache_usage(db) > before
    finally:
        db.close()


def test_a_damaged_value_is_reported_only_by_point_reads_that_verify(path):
    build(path)
    damaged = damage_value_of(path, 7)
    db = strata.open(path, compression="none", block_cache_size=64 << 20)
    try:
        assert db.get(key(7), verify_checksums=False, fill_cache=False) == damaged
        assert db.multi_get([key(7)], verify_checksums=False, fill_cache=False) == [damaged]
        with pytest.raises(strata.Corruption):
            db.get(key(7))
        with pytest.raises(strata.Corruption):
            db.multi_get([key(6), key(7)])
    finally:
        db.close()
