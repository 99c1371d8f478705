"""Updatable cursors of transactions: changes go through the transaction, in both kinds."""

import pytest

import strata


@pytest.mark.parametrize("pessimistic", [False, True])
def test_a_cursor_updates_and_deletes_through_its_transaction(path, pessimistic):
    with strata.open(path, transaction_db=pessimistic) as db:
        for k, v in [(b"k1", b"v1"), (b"k2", b"v2"), (b"k3", b"v3")]:
            db[k] = v
        with db.transaction() as txn:
            c = txn.cursor()
            assert not c.valid
            c.seek(b"k1")
            assert (c.key, c.value) == (b"k1", b"v1")
            c.update(b"V1")
            assert c.value == b"V1"
            c.next()
            assert c.key == b"k2"
            c.delete()
            assert (c.key, c.value) == (b"k2", b"")  # stays until it moves
            c.next()
            assert c.key == b"k3"
            c.prev()
            assert c.key == b"k1"  # the deleted k2 is not shown again
            c.seek_to_last()
            assert c.key == b"k3"
            c.seek_for_prev(b"k2")
            assert c.key == b"k1"
            c.seek_to_first()
            c.prev()
            assert not c.valid
            with pytest.raises(ValueError, match="not at an entry"):
                c.update(b"x")
            assert db[b"k1"] == b"v1"  # not yet committed
        assert db[b"k1"] == b"V1"
        assert db.get(b"k2") is None


def test_a_cursor_keeps_to_its_bounds_and_family(db):
    cf = db.create_column_family("other")
    cf[b"a"] = b"1"
    cf[b"b"] = b"2"
    cf[b"c"] = b"3"
    db[b"a"] = b"default"
    with db.transaction() as txn:
        c = txn.cursor(b"b", b"c", column_family="other")
        c.seek_to_first()
        assert (c.key, c.value) == (b"b", b"2")
        c.update(b"two")
        c.next()
        assert not c.valid
    assert cf[b"b"] == b"two"
    assert db[b"a"] == b"default"


def test_a_cursor_of_an_ended_transaction_raises(db):
    db[b"a"] = b"1"
    txn = db.transaction()
    c = txn.cursor()
    txn.commit()
    with pytest.raises(strata.InvalidArgument, match="already committed"):
        c.seek_to_first()
