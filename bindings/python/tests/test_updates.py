"""The change feed: Db.updates_since and WriteBatch.entries, checked against a model of the
batches written (each one's first sequence number and its updates)."""

import random

import pytest

import strata

ONE = (1).to_bytes(8, "little")


def write_batches(db, other, count, flush_at=()):
    """Writes `count` batches of mixed updates, flushing after those in `flush_at`, and
    returns the model: a list of (first sequence number, entries)."""
    rng = random.Random(7)
    model = []
    for i in range(count):
        seq = db.latest_sequence_number() + 1
        key, value = b"k%03d" % i, b"v%03d" % i
        entries = []
        if i % 5 == 4:
            # A single delete is a write of its own, a batch of one update.
            db.single_delete(b"k%03d" % (i - 1))
            entries.append(("single_delete", 0, b"k%03d" % (i - 1), b""))
        else:
            with db.write_batch() as batch:
                batch.put(key, value)
                entries.append(("put", 0, key, value))
                batch.put(key, value, column_family=other)
                entries.append(("put", other.id, key, value))
                kind = rng.choice(["merge", "delete", "delete_range"])
                if kind == "merge":
                    batch.merge(b"count", ONE)
                    entries.append(("merge", 0, b"count", ONE))
                elif kind == "delete":
                    prev = b"k%03d" % rng.randrange(i + 1)
                    batch.delete(prev, column_family=other)
                    entries.append(("delete", other.id, prev, b""))
                else:
                    end = b"k%03d" % rng.randrange(i + 1)
                    batch.delete_range(b"a", end)
                    entries.append(("delete_range", 0, b"a", end))
        assert db.latest_sequence_number() == seq + len(entries) - 1
        model.append((seq, entries))
        if i in flush_at:
            db.flush()
    return model


def replay(db, since):
    return [(seq, batch.entries()) for seq, batch in db.updates_since(since)]


def expected(model, since):
    """The batches from the one holding `since` on."""
    first = max(i for i, (seq, _) in enumerate(model) if seq <= since) if since >= 1 else 0
    return model[first:]


@pytest.fixture
def kept(path):
    """A database keeping its WALs for the feed, with a merge operator and a second family."""
    d = strata.open(path, wal_ttl_seconds=3600, wal_size_limit_mb=64, merge_operator="uint64add")
    yield d
    d.close()


def test_the_feed_replays_what_was_written_across_flushes(kept):
    other = kept.create_column_family("other")
    assert other.id != 0
    model = write_batches(kept, other, 30, flush_at={7, 18})
    starts = [1, model[3][0] + 1, model[8][0], model[19][0], model[-1][0]]
    for since in starts:
        assert replay(kept, since) == expected(model, since), since
    # Past the last write: an empty feed.
    assert replay(kept, kept.latest_sequence_number() + 1) == []
    # The feed ends at the last write published when it was made.
    feed = kept.updates_since(model[-1][0])
    kept[b"later"] = b"x"
    assert [seq for seq, _ in feed] == [model[-1][0]]
    # A batch read back is a WriteBatch: its len() counts its updates.
    seq, batch = next(iter(kept.updates_since(model[0][0])))
    assert len(batch) == len(model[0][1])
    assert batch.log_data() == []


def test_a_sequence_number_older_than_the_wals_raises_not_found(db):
    db[b"a"] = b"1"
    db.flush()
    db[b"b"] = b"2"
    latest = db.latest_sequence_number()
    with pytest.raises(strata.NotFound) as e:
        db.updates_since(1)
    assert "sequence 1 is no longer in the WALs" in str(e.value)
    assert "the oldest sequence available is %d" % latest in str(e.value)
    assert [(s, b.entries()) for s, b in db.updates_since(latest)] == [
        (latest, [("put", 0, b"b", b"2")])
    ]


def test_a_closed_database_refuses_the_feed(path):
    d = strata.open(path, wal_ttl_seconds=60)
    d[b"a"] = b"1"
    feed = d.updates_since(1)
    d.close()
    with pytest.raises(strata.Unavailable, match="is closed"):
        d.updates_since(1)
    with pytest.raises(strata.Unavailable, match="is closed"):
        next(feed)
    with pytest.raises(strata.Unavailable, match="is closed"):
        d.latest_sequence_number()


def test_a_batch_built_in_python_lists_its_entries(db):
    cf = db.create_column_family("cf")
    batch = db.write_batch()
    batch[b"a"] = b"1"
    batch.delete(b"b", column_family=cf)
    batch.delete_range(b"c", b"d")
    assert batch.entries() == [
        ("put", 0, b"a", b"1"),
        ("delete", cf.id, b"b", b""),
        ("delete_range", 0, b"c", b"d"),
    ]


@pytest.mark.parametrize("bad", [-1, "1", None])
def test_a_bad_sequence_number_is_refused(db, bad):
    with pytest.raises((TypeError, OverflowError)):
        db.updates_since(bad)


@pytest.mark.parametrize(
    "option, value", [("wal_ttl_seconds", -1), ("wal_size_limit_mb", "big")]
)
def test_bad_wal_options_are_refused(path, option, value):
    with pytest.raises(ValueError, match="option " + option):
        strata.open(path, **{option: value})
