"""SstWriter and Db.ingest(): tables written outside the database, added atomically."""

import pytest

import strata


def test_a_written_table_is_ingested(db, tmp_path):
    db[b"m"] = b"old"
    file = tmp_path / "bulk.sst"
    w = strata.SstWriter(file)
    w.put(b"a", b"1")
    w.put(b"b", b"2")
    w.delete(b"c")
    w.put(b"m", b"new")
    w.delete_range(b"x", b"z")
    assert w.file_size > 0
    info = w.finish()
    assert info["entries"] == 4 and info["range_deletions"] == 1
    assert (info["smallest_key"], info["largest_key"]) == (b"a", b"m")
    assert w.file_size == 0
    with pytest.raises(strata.InvalidArgument, match="already finished"):
        w.put(b"z", b"1")
    db.ingest([file])
    assert file.exists()  # copied
    assert db[b"a"] == b"1" and db[b"m"] == b"new"


def test_keys_out_of_order_are_refused(tmp_path):
    w = strata.SstWriter(tmp_path / "bad.sst")
    w.put(b"b", b"1")
    with pytest.raises(strata.InvalidArgument, match="order"):
        w.put(b"a", b"1")


def test_merge_operands_and_moves_into_a_family(db, tmp_path):
    cf = db.create_column_family("bulk", merge_operator="stringappend")
    cf[b"k"] = b"base"
    file = tmp_path / "m.sst"
    w = strata.SstWriter(file, merge_operator="stringappend")
    w.merge(b"k", b"more")
    w.finish()
    db.ingest([file], move_files=True, column_family="bulk")
    assert not file.exists()  # moved
    assert cf[b"k"] == b"base,more"
    assert db.get(b"k") is None
