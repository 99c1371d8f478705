"""Two-phase commit: name, prepare, then commit or roll back; prepared transactions survive
close and are handed out by prepared_transactions() after the next open."""

import pytest

import strata


def test_a_prepared_transaction_commits(path):
    with strata.open(path, transaction_db=True) as db:
        txn = db.transaction()
        txn.set_name("xa-1")
        assert txn.name == "xa-1"
        txn[b"order"] = b"paid"
        txn.prepare()
        assert db.get(b"order") is None
        txn.commit()
        assert db[b"order"] == b"paid"


def test_prepare_needs_a_name(path):
    with strata.open(path, transaction_db=True) as db:
        txn = db.transaction()
        with pytest.raises(strata.InvalidArgument, match="name"):
            txn.prepare()
        txn.rollback()


def test_a_prepared_transaction_survives_close_and_is_recovered(path):
    with strata.open(path, transaction_db=True) as db:
        txn = db.transaction()
        txn.set_name("xa-2")
        txn[b"late"] = b"yes"
        txn.prepare()
    # Closing kept it prepared on disk: the next open hands it out, still uncommitted.
    with strata.open(path, transaction_db=True) as db:
        assert db.get(b"late") is None
        prepared = db.prepared_transactions()
        assert [t.name for t in prepared] == ["xa-2"]
        with pytest.raises(strata.InvalidArgument, match="only commit or rollback"):
            prepared[0].get(b"late")
        prepared[0].commit()
        assert db[b"late"] == b"yes"
        assert db.prepared_transactions() == []


def test_a_recovered_transaction_can_be_rolled_back(path):
    with strata.open(path, transaction_db=True) as db:
        for i in range(2):
            txn = db.transaction()
            txn.set_name(f"xa-{i}")
            txn[b"k%d" % i] = b"v"
            txn.prepare()
            del txn  # dropped while prepared: parked, locks held
        prepared = db.prepared_transactions()
        assert sorted(t.name for t in prepared) == ["xa-0", "xa-1"]
        for t in prepared:
            t.rollback()
        assert db.get(b"k0") is None and db.get(b"k1") is None


def test_two_phase_commit_refuses_optimistic_transactions(db):
    txn = db.transaction()
    with pytest.raises(strata.InvalidArgument, match="transaction_db=True"):
        txn.set_name("x")
    with pytest.raises(strata.InvalidArgument, match="transaction_db=True"):
        txn.prepare()
    assert txn.name is None
    assert db.prepared_transactions() == []
