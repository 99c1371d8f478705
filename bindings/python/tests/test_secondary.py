"""Secondary instances: strata.open_as_secondary, try_catch_up_with_primary, Iterator.refresh."""

import pytest

import strata


@pytest.fixture
def pair(tmp_path):
    """A primary with one key, and a secondary following it; both closed after the test."""
    primary = strata.open(tmp_path / "db")
    primary[b"a"] = b"1"
    secondary = strata.open_as_secondary(tmp_path / "db", tmp_path / "follower")
    yield primary, secondary
    secondary.close()
    primary.close()


def test_a_secondary_sees_the_primary_after_each_catch_up(pair, tmp_path):
    primary, secondary = pair
    assert secondary[b"a"] == b"1"
    assert secondary.read_only
    assert secondary.secondary_path == tmp_path / "follower"
    assert primary.secondary_path is None
    primary[b"b"] = b"2"
    del primary[b"a"]
    assert secondary.get(b"b") is None  # not caught up yet
    assert (primary.latest_sequence_number(), secondary.latest_sequence_number()) == (3, 1)
    secondary.try_catch_up_with_primary()
    assert secondary.latest_sequence_number() == 3
    assert secondary.get(b"a") is None and secondary[b"b"] == b"2"
    # Flushed and compacted data is followed too, and new column families appear.
    cf = primary.create_column_family("later")
    cf[b"x"] = b"y"
    for i in range(100):
        primary[b"k%03d" % i] = b"v%d" % i
    primary.flush()
    primary.compact_all()
    secondary.try_catch_up_with_primary()
    assert list(secondary.keys(start=b"k", end=b"l")) == [b"k%03d" % i for i in range(100)]
    assert secondary.column_family("later")[b"x"] == b"y"


def test_an_iterator_refreshed_sees_the_catch_up(pair):
    primary, secondary = pair
    it = secondary.items()
    primary[b"b"] = b"2"
    secondary.try_catch_up_with_primary()
    assert list(it) == [(b"a", b"1")]  # made before the catch-up
    it.refresh()
    assert list(it) == [(b"a", b"1"), (b"b", b"2")]


def test_refresh_restarts_from_the_start_of_the_range(db):
    db[b"a"], db[b"c"] = b"1", b"3"
    it = db.keys(start=b"b")
    db[b"b"] = b"2"
    assert next(it) == b"c"
    it.refresh()
    assert list(it) == [b"b", b"c"]
    rev = db.keys(reverse=True)
    assert next(rev) == b"c"
    db[b"d"] = b"4"
    rev.refresh()
    assert list(rev) == [b"d", b"c", b"b", b"a"]


def test_iterators_of_fixed_views_cannot_be_refreshed(db):
    db[b"a"] = b"1"
    snap = db.snapshot()
    with pytest.raises(strata.InvalidArgument, match="snapshot"):
        snap.keys().refresh()
    snap.close()
    with db.transaction() as txn:
        with pytest.raises(strata.InvalidArgument, match="transaction"):
            txn.keys().refresh()


def test_a_secondary_refuses_writes_and_transactions(pair):
    _, secondary = pair
    with pytest.raises(strata.Unavailable, match="secondary"):
        secondary[b"c"] = b"3"
    with pytest.raises(strata.Unavailable):
        secondary.delete(b"a")
    with pytest.raises(strata.Unavailable):
        with secondary.write_batch() as batch:
            batch[b"c"] = b"3"
    with pytest.raises(strata.Unavailable, match="read-only"):
        secondary.transaction()
    assert secondary[b"a"] == b"1"


def test_bad_secondary_opens_and_calls_are_refused(pair, tmp_path):
    primary, secondary = pair
    with pytest.raises(strata.InvalidArgument, match="not open as a secondary"):
        primary.try_catch_up_with_primary()
    with pytest.raises(strata.NotFound, match="no database"):
        strata.open_as_secondary(tmp_path / "missing", tmp_path / "f2")
    with pytest.raises(strata.InvalidArgument, match="directory of its own"):
        strata.open_as_secondary(tmp_path / "db", tmp_path / "db")
    with pytest.raises(ValueError, match="read_only nor transaction_db"):
        strata.open_as_secondary(tmp_path / "db", tmp_path / "f3", transaction_db=True)
    with pytest.raises(TypeError, match="unknown option"):
        strata.open_as_secondary(tmp_path / "db", tmp_path / "f4", no_such_option=1)
    secondary.close()
    with pytest.raises(strata.Unavailable, match="closed"):
        secondary.try_catch_up_with_primary()
    with pytest.raises(strata.Unavailable, match="closed"):
        secondary.secondary_path
    with pytest.raises(strata.Unavailable, match="closed"):
        secondary.latest_sequence_number()
