"""Compression choices (per level, levels and dictionaries, the bottommost level's own),
block checksums, ingest behind and live file metadata."""

import pytest

import strata


def fill(db, rounds=2, n=2000):
    """Compressible values in overlapping flushes, so that a compaction merges them."""
    for r in range(rounds):
        for i in range(r, n, rounds - r):
            db[b"key%06d" % i] = bytes([97 + i % 3]) * 256
        db.flush()


def table_bytes(db):
    return int(db.property("rocksdb.total-sst-files-size"))


def options_file(path):
    return "".join(p.read_text() for p in path.glob("OPTIONS-*"))


def test_compression_per_level_bottommost_options_and_checksum(path):
    with strata.open(
        path,
        compression="zstd",  # compression_per_level overrides it
        compression_per_level=["none", "zstd"],
        compression_opts={"level": 3, "max_dict_bytes": 4096, "zstd_max_train_bytes": 40960},
        bottommost_compression="zstd",
        bottommost_compression_opts={"level": 1},
        checksum="xxh3",
    ) as db:
        fill(db)
        flushed = table_bytes(db)
        assert flushed > 2000 * 256  # level 0 uncompressed
        db.compact_all()
        assert table_bytes(db) * 4 < flushed
        assert db[b"key001234"] == b"b" * 256  # 1234 % 3 == 1
        files = db.live_files_metadata()
        assert {f["level"] for f in files} == {6}
        text = options_file(path)
        assert "checksum=xxh3" in text
        assert "compression_opts.max_dict_bytes=4096" in text
        assert "compression_opts.zstd_max_train_bytes=40960" in text
    # Tables checksummed by xxh3 read under crc32c, the default, too.
    with strata.open(path, checksum="CRC32C") as db:
        assert db[b"key000001"] == b"b" * 256
        assert "checksum=crc32c" in options_file(path)


def test_family_compression_options(db):
    cf = db.create_column_family(
        "dict", compression="zstd", compression_opts={"max_dict_bytes": 1024}, checksum="xxh3"
    )
    cf[b"k"] = b"v" * 100
    cf.flush()
    assert cf[b"k"] == b"v" * 100


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"checksum": "md5"}, ValueError, "unknown checksum 'md5' \\(crc32c or xxh3\\)"),
        ({"checksum": 4}, ValueError, "option checksum"),
        ({"compression_per_level": "zstd"}, TypeError, "list of compression names"),
        ({"compression_per_level": 7}, TypeError, "list of compression names"),
        ({"compression_per_level": ["none", "brotli"]}, ValueError, "compression_per_level\\[1\\]: unknown compression 'brotli'"),
        ({"compression_opts": 3}, TypeError, "compression_opts must be a dict"),
        ({"compression_opts": {"window": 3}}, TypeError, "unknown field 'window'"),
        ({"compression_opts": {"max_dict_bytes": -1}}, ValueError, "compression_opts.max_dict_bytes"),
        ({"bottommost_compression_opts": {"level": "high"}}, ValueError, "bottommost_compression_opts.level"),
        ({"allow_ingest_behind": "yes"}, ValueError, "option allow_ingest_behind"),
    ],
)
def test_bad_compression_options_name_the_option(path, options, error, message):
    with pytest.raises(error, match=message):
        strata.open(path, **options)
    assert not path.exists()


def test_a_level_zstd_lacks_is_refused_at_open(path):
    with pytest.raises(strata.InvalidArgument, match="level"):
        strata.open(path, compression="zstd", compression_opts={"level": 99})


def write_table(file, items):
    w = strata.SstWriter(file)
    for k, v in items:
        w.put(k, v)
    w.finish()
    return file


def test_ingest_behind_puts_files_under_the_data(path, tmp_path):
    with strata.open(path, allow_ingest_behind=True) as db:
        db[b"k"] = b"new"
        db.ingest([write_table(tmp_path / "old.sst", [(b"k", b"old"), (b"m", b"filled")])],
                  ingest_behind=True)
        assert db[b"k"] == b"new" and db[b"m"] == b"filled"
        [behind] = [f for f in db.live_files_metadata() if f["level"] == 6]
        assert behind["smallest_seqno"] == behind["largest_seqno"] == 0
        assert (behind["smallest_key"], behind["largest_key"]) == (b"k", b"m")


def test_ingest_behind_without_the_reserved_level_is_refused(db, tmp_path):
    file = write_table(tmp_path / "a.sst", [(b"a", b"1")])
    with pytest.raises(strata.InvalidArgument, match="allow_ingest_behind"):
        db.ingest([file], ingest_behind=True)
    assert db.get(b"a") is None


def test_live_files_metadata(db):
    cf = db.create_column_family("other")
    for i in range(10):
        db[b"d%d" % i] = b"x"
    del db[b"d3"]
    cf[b"o"] = b"y"
    db.flush()
    cf.flush()
    files = db.live_files_metadata()
    assert [f["column_family_name"] for f in files] == ["default", "other"]
    mine = db.live_files_metadata(column_family="other")
    assert mine == [files[1]]
    d = files[0]
    assert (d["level"], d["num_entries"], d["num_deletions"]) == (0, 10, 1)  # d3 put and deleted: the flush keeps the deletion
    assert (d["smallest_key"], d["largest_key"]) == (b"d0", b"d9")
    assert d["name"].endswith(".sst") and d["size"] > 0
    assert (d["directory"] / d["name"]).exists()
    assert d["user_properties"] == {} and d["blob_file_references"] == []
    with pytest.raises(TypeError, match="column_family"):
        db.live_files_metadata(column_family=3)
    db.close()
    with pytest.raises(strata.Unavailable, match="closed"):
        db.live_files_metadata()
