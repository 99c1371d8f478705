"""manual_wal_flush= and Db.flush_wal: with the option on, a write's WAL record is held in
memory until flush_wal (or a synced write, a memtable switch, a checkpoint, a megabyte of
them, close). A kill is simulated by copying the open database's directory (its LOCK left
out) once its flushes and compactions are done, and opening the copy: that is what a
restart after a kill finds."""

import itertools
import shutil

import pytest

import strata


def wal_bytes(path):
    """The bytes of the WAL files (NNNNNN.log) in `path`, as the file system has them."""
    return sum(
        f.stat().st_size for f in path.iterdir() if f.suffix == ".log" and f.stem.isdigit()
    )


_copies = itertools.count()


def after_a_kill(db, tmp_path):
    """A copy of `db`'s directory, taken once its background work is done, opened: what a
    restart after a kill finds. A file deleted while the copy is made is an obsolete one (a
    WAL that an open replayed into a table), which the copy does without."""
    db.wait_for_compactions()
    copy = tmp_path / f"copy{next(_copies)}"
    copy.mkdir()
    for f in db.path.iterdir():
        if f.name == "LOCK" or not f.is_file():
            continue
        try:
            shutil.copyfile(f, copy / f.name)
        except FileNotFoundError:
            pass
    return strata.open(copy, create_if_missing=False)


def kept(db, tmp_path, key):
    """The value of `key` a kill of `db` right now leaves (None: lost)."""
    with after_a_kill(db, tmp_path) as copy:
        return copy.get(key)


def test_held_writes_are_not_in_the_wal_file_until_flush_wal(path, tmp_path):
    with strata.open(path, manual_wal_flush=True) as db:
        db.wait_for_compactions()
        before = wal_bytes(path)
        db[b"a"] = b"1"
        db.put(b"b", b"2")
        assert db[b"a"] == b"1", "readable at once: only the WAL record is held"
        assert wal_bytes(path) == before
        assert kept(db, tmp_path, b"a") is None
        assert kept(db, tmp_path, b"b") is None

        db.flush_wal()
        flushed = wal_bytes(path)
        assert flushed > before
        assert kept(db, tmp_path, b"a") == b"1"
        assert kept(db, tmp_path, b"b") == b"2"

        # Held again after the flush; a synced flush appends them too.
        db[b"c"] = b"3"
        assert wal_bytes(path) == flushed
        assert kept(db, tmp_path, b"c") is None
        db.flush_wal(sync=True)
        assert wal_bytes(path) > flushed
        assert kept(db, tmp_path, b"c") == b"3"

        # A synced write appends the records held before it.
        db[b"d"] = b"4"
        db.put(b"e", b"5", sync=True)
        assert kept(db, tmp_path, b"d") == b"4"

        # Close appends what is still held.
        db[b"f"] = b"6"
        assert kept(db, tmp_path, b"f") is None
    with strata.open(path) as db:
        assert db[b"f"] == b"6"


def test_without_the_option_every_write_is_in_the_wal_file(path, tmp_path):
    with strata.open(path) as db:
        db.wait_for_compactions()
        before = wal_bytes(path)
        db[b"a"] = b"1"
        assert wal_bytes(path) > before
        assert kept(db, tmp_path, b"a") == b"1"
        db.flush_wal()
        db.flush_wal(True)
        assert kept(db, tmp_path, b"a") == b"1"


def test_flush_wal_of_a_closed_or_read_only_database_is_refused(path):
    db = strata.open(path, manual_wal_flush=True)
    db[b"a"] = b"1"
    db.close()
    with pytest.raises(strata.Unavailable, match="is closed"):
        db.flush_wal()
    with pytest.raises(strata.Unavailable, match="is closed"):
        db.flush_wal(sync=True)
    with strata.open(path, read_only=True, manual_wal_flush=True) as ro:
        assert ro[b"a"] == b"1"
        with pytest.raises(strata.Unavailable, match="read-only"):
            ro.flush_wal()


def test_a_bad_option_value_is_refused(path):
    with pytest.raises(ValueError, match="manual_wal_flush"):
        strata.open(path, manual_wal_flush="yes")
    with strata.open(path) as db, pytest.raises(TypeError):
        db.flush_wal(sync="yes")


@pytest.mark.parametrize("compression", ["none", "snappy", "lz4", "zstd"])
def test_a_compressed_wal_replays_after_a_kill(path, tmp_path, compression):
    """wal_compression=: the records of compressible values take fewer bytes in the WAL, and
    a restart (opened without the option) replays them all."""
    value = b"a value that repeats, " * 40
    with strata.open(path, wal_compression=compression) as db:
        db.wait_for_compactions()
        before = wal_bytes(path)
        for i in range(100):
            db.put(b"key-%03d" % i, value + b"%d" % i)
        grown = wal_bytes(path) - before
        assert (grown < 100 * len(value) / 2) == (compression != "none"), grown
        assert kept(db, tmp_path, b"key-000") == value + b"0"
        assert kept(db, tmp_path, b"key-099") == value + b"99"


def test_an_unknown_wal_compression_is_refused_by_name(path):
    with pytest.raises(ValueError, match="wal_compression: unknown compression 'zlib'"):
        strata.open(path, wal_compression="zlib")
