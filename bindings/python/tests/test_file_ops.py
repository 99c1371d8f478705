"""Key ranges measured and dropped file by file, and single deletes."""

import pytest

import strata


def fill(target, n=1000):
    for i in range(n):
        target[b"k%04d" % i] = b"v" * 512


def test_approximate_sizes_measure_the_tables(db):
    cf = db.create_column_family("other")
    fill(db)
    fill(cf)
    db.compact_all()
    cf.flush()
    half = 500 * 512
    sizes = db.approximate_sizes([(b"k0000", b"k0500"), (b"k0500", b"k1000"), (b"z", b"zz")])
    assert sizes[0] > half / 2 and sizes[1] > half / 2 and sizes[2] == 0
    [whole] = db.approximate_sizes([(b"", b"\xff")], column_family="other")
    assert whole > 2 * half / 2
    assert db.approximate_sizes([]) == []


def test_delete_files_in_range_drops_whole_tables(db):
    fill(db)
    db.compact_all()  # out of level 0, which is left alone
    names = db.delete_files_in_range(None, b"k9")
    assert names and all(n.endswith(".sst") for n in names)
    assert db.get(b"k0001") is None
    assert db.delete_files_in_range(b"a", b"b") == []


def test_single_delete(db):
    cf = db.create_column_family("other")
    db[b"once"] = b"1"
    db.single_delete(b"once")
    assert db.get(b"once") is None
    cf[b"once"] = b"1"
    cf.single_delete(b"once", sync=True)
    assert cf.get(b"once") is None


def test_bad_range_arguments_name_the_argument(db):
    with pytest.raises(TypeError, match="ranges must be an iterable"):
        db.approximate_sizes(3)
    with pytest.raises(TypeError, match=r"ranges\[1\] must be a \(start, limit\) pair"):
        db.approximate_sizes([(b"a", b"b"), b"c"])
    with pytest.raises(TypeError, match=r"ranges\[0\] start must be bytes, not str"):
        db.approximate_sizes([("a", b"b")])
    with pytest.raises(TypeError, match="end must be bytes"):
        db.delete_files_in_range(b"a", 5)
    with pytest.raises(TypeError, match="key must be bytes, not str"):
        db.single_delete("k")
    with pytest.raises(strata.NotFound):
        db.approximate_sizes([], column_family="missing")
    db.close()
    with pytest.raises(strata.Unavailable, match="closed"):
        db.approximate_sizes([(b"a", b"b")])
    with pytest.raises(strata.Unavailable, match="closed"):
        db.delete_files_in_range()


def test_a_secondary_drops_no_files(tmp_path):
    with strata.open(tmp_path / "db") as primary:
        primary[b"a"] = b"1"
        with strata.open_as_secondary(tmp_path / "db", tmp_path / "f") as secondary:
            with pytest.raises(strata.Unavailable, match="secondary"):
                secondary.delete_files_in_range()
            with pytest.raises(strata.Unavailable, match="secondary"):
                secondary.single_delete(b"a")
