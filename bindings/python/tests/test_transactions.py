"""Transactions: optimistic (a plain database) and pessimistic (transaction_db=True)."""

import threading
import time

import pytest

import strata


@pytest.fixture
def tdb(path):
    """A fresh database with pessimistic transactions and a short lock timeout."""
    d = strata.open(path, transaction_db=True, lock_timeout=0.2)
    yield d
    d.close()


@pytest.fixture(params=["optimistic", "pessimistic"])
def anydb(request, path):
    """A fresh database of each kind."""
    d = strata.open(path, transaction_db=request.param == "pessimistic")
    yield d
    d.close()


def test_kind_follows_the_database(anydb):
    pessimistic = anydb.transaction_db
    assert anydb.transaction().pessimistic == pessimistic


def test_commit_makes_writes_visible_and_rollback_drops_them(anydb):
    anydb[b"gone"] = b"x"
    t = anydb.transaction()
    t[b"a"] = b"1"
    t.put(b"b", b"2")
    del t[b"gone"]
    assert anydb.get(b"a") is None and anydb[b"gone"] == b"x"  # not before the commit
    t.commit()
    assert (anydb[b"a"], anydb[b"b"], anydb.get(b"gone")) == (b"1", b"2", None)
    assert not t.active

    t = anydb.transaction()
    t[b"a"] = b"changed"
    t.delete(b"b")
    t.rollback()
    assert (anydb[b"a"], anydb[b"b"]) == (b"1", b"2")


def test_reads_see_the_transactions_own_writes(anydb):
    anydb[b"k"] = b"old"
    anydb[b"d"] = b"doomed"
    t = anydb.transaction()
    assert t[b"k"] == b"old"
    t[b"k"] = b"new"
    t[b"n"] = b"fresh"
    del t[b"d"]
    assert t[b"k"] == b"new" and t.get(b"n") == b"fresh"
    assert b"d" not in t and t.get(b"d", b"default") == b"default"
    with pytest.raises(KeyError):
        t[b"d"]
    assert t.get(b"k", for_update=True) == b"new"
    assert anydb[b"k"] == b"old"  # others do not see it yet
    t.rollback()


def test_items_show_the_transactions_view(anydb):
    for k in [b"a", b"c", b"e"]:
        anydb[k] = b"db"
    t = anydb.transaction()
    t[b"b"] = b"txn"
    t[b"c"] = b"txn"
    del t[b"e"]
    assert list(t.items()) == [(b"a", b"db"), (b"b", b"txn"), (b"c", b"txn")]
    assert list(t.keys(start=b"b", reverse=True)) == [b"c", b"b"]
    assert list(t.values(end=b"b")) == [b"db"]
    it = t.items()
    t.commit()
    with pytest.raises(strata.InvalidArgument, match="already committed"):
        next(it)


def test_optimistic_conflict_raises_at_commit_and_writes_nothing(db):
    db[b"k"] = b"0"
    t1 = db.transaction()
    assert t1.get(b"k", for_update=True) == b"0"
    t1[b"k"] = b"from t1"
    t1[b"other"] = b"from t1"
    with db.transaction() as t2:
        t2[b"k"] = b"from t2"
    with pytest.raises(strata.TransactionConflict, match="conflict: key 'k'") as info:
        t1.commit()
    assert isinstance(info.value, strata.TransactionError)
    assert isinstance(info.value, strata.Busy)
    assert db[b"k"] == b"from t2"
    assert b"other" not in db
    with pytest.raises(strata.InvalidArgument, match="ended by a failed commit"):
        t1.get(b"k")


def test_optimistic_read_without_for_update_does_not_conflict(db):
    db[b"k"] = b"0"
    t1 = db.transaction()
    assert t1[b"k"] == b"0"  # a plain read is not checked at commit
    t1[b"elsewhere"] = b"1"
    db[b"k"] = b"changed"
    t1.commit()
    assert db[b"elsewhere"] == b"1"


def test_pessimistic_lock_timeout_between_two_threads(tdb):
    holder = tdb.transaction()
    holder[b"k"] = b"holder"
    errors = []

    def contender():
        t = tdb.transaction()
        try:
            t[b"k"] = b"contender"
        except strata.Error as e:
            errors.append(e)
        t[b"free"] = b"contender"  # the transaction goes on without that lock
        t.commit()

    thread = threading.Thread(target=contender)
    thread.start()
    thread.join()
    assert len(errors) == 1
    assert isinstance(errors[0], strata.LockTimeout)
    assert isinstance(errors[0], strata.Busy)
    assert "key 'k'" in str(errors[0])
    holder.commit()
    assert tdb[b"k"] == b"holder" and tdb[b"free"] == b"contender"


def test_pessimistic_waiter_proceeds_once_the_holder_commits(tdb):
    holder = tdb.transaction()
    holder[b"k"] = b"holder"
    seen = []

    def waiter():
        with tdb.transaction(lock_timeout=10) as t:
            seen.append(t.get(b"k", for_update=True))  # waits for the holder's lock
            t[b"k"] = b"waiter"

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.2)  # the waiter waits with the GIL released: this thread runs meanwhile
    holder.commit()
    thread.join()
    assert seen == [b"holder"]
    assert tdb[b"k"] == b"waiter"


def test_pessimistic_deadlock_is_refused_at_once(tdb):
    t1 = tdb.transaction(lock_timeout=10)
    t2 = tdb.transaction(lock_timeout=10)
    t1[b"a"] = b"t1"
    t2[b"b"] = b"t2"
    outcomes = {}

    def cross(name, txn, key):
        # Each asks for the other's key: whichever asks second would close the cycle.
        try:
            txn[key] = name.encode()
            outcomes[name] = "locked"
        except strata.Deadlock as e:
            outcomes[name] = "deadlock"
            assert "deadlock" in str(e) and isinstance(e, strata.Busy)
            txn.rollback()  # releases its key: the other goes on

    threads = [
        threading.Thread(target=cross, args=("t1", t1, b"b")),
        threading.Thread(target=cross, args=("t2", t2, b"a")),
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - started < 5  # refused at once, not after the lock timeout
    assert sorted(outcomes.values()) == ["deadlock", "locked"]
    winner = "t1" if outcomes["t1"] == "locked" else "t2"
    (t1 if winner == "t1" else t2).commit()
    assert (tdb[b"a"], tdb[b"b"]) == (winner.encode(), winner.encode())


def test_plain_writes_of_a_transaction_db_wait_for_its_locks(tdb):
    t = tdb.transaction()
    t[b"k"] = b"txn"
    with pytest.raises(strata.LockTimeout):
        tdb[b"k"] = b"plain"  # the plain write waits 1 s for the lock, then gives up
    tdb[b"other"] = b"plain"
    t.commit()
    tdb[b"k"] = b"plain"
    assert tdb[b"k"] == b"plain"


def test_a_range_deletion_is_refused_by_a_transaction_db(tdb):
    tdb[b"a"] = b"1"
    with pytest.raises(strata.InvalidArgument, match="range deletion cannot be written"):
        tdb.delete_range(b"a", b"z")
    assert tdb[b"a"] == b"1"


def test_pessimistic_expiration_fails_the_commit(tdb):
    t1 = tdb.transaction(expiration=0.05)
    t1[b"k"] = b"t1"
    time.sleep(0.1)
    with tdb.transaction() as t2:
        t2[b"k"] = b"t2"  # takes the expired transaction's lock
    with pytest.raises(strata.TransactionExpired, match="expired"):
        t1.commit()
    assert tdb[b"k"] == b"t2"


def test_pessimistic_set_snapshot_refuses_a_key_written_since(tdb):
    t = tdb.transaction(set_snapshot=True)
    tdb[b"k"] = b"later"
    with pytest.raises(strata.TransactionConflict):
        t[b"k"] = b"txn"
    t.rollback()


def test_context_manager_commits_on_a_normal_exit(anydb):
    with anydb.transaction() as t:
        t[b"k"] = b"v"
    assert anydb[b"k"] == b"v"
    assert not t.active


def test_context_manager_rolls_back_on_an_exception(anydb):
    with pytest.raises(ZeroDivisionError):
        with anydb.transaction() as t:
            t[b"k"] = b"v"
            1 / 0
    assert b"k" not in anydb
    assert not t.active


def test_context_manager_after_an_explicit_commit_or_rollback(anydb):
    with anydb.transaction() as t:
        t[b"a"] = b"1"
        t.commit()
    with anydb.transaction() as t:
        t[b"b"] = b"1"
        t.rollback()
    assert anydb[b"a"] == b"1" and b"b" not in anydb


def test_savepoints(anydb):
    t = anydb.transaction()
    t[b"a"] = b"1"
    t.set_savepoint()
    t[b"b"] = b"2"
    t[b"a"] = b"changed"
    t.set_savepoint()
    t[b"c"] = b"3"
    t.rollback_to_savepoint()
    assert t.get(b"c") is None and t[b"a"] == b"changed"
    t.rollback_to_savepoint()
    assert t.get(b"b") is None and t[b"a"] == b"1"
    with pytest.raises(strata.NotFound):
        t.rollback_to_savepoint()
    t.commit()
    assert anydb[b"a"] == b"1" and b"b" not in anydb


def test_pessimistic_savepoint_releases_the_locks_taken_since(tdb):
    t = tdb.transaction()
    t.set_savepoint()
    t[b"k"] = b"txn"
    t.rollback_to_savepoint()
    tdb[b"k"] = b"plain"  # would time out if the lock were still held
    t.commit()
    assert tdb[b"k"] == b"plain"


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.get(b"k"),
        lambda t: t[b"k"],
        lambda t: t.put(b"k", b"v"),
        lambda t: t.delete(b"k"),
        lambda t: t.items(),
        lambda t: t.set_savepoint(),
        lambda t: t.commit(),
    ],
)
@pytest.mark.parametrize("end, word", [("commit", "committed"), ("rollback", "rolled back")])
def test_use_after_the_end_raises(anydb, call, end, word):
    t = anydb.transaction()
    t[b"k"] = b"v"
    getattr(t, end)()
    with pytest.raises(strata.InvalidArgument, match=f"already {word}: begin a new one"):
        call(t)
    t.rollback()  # does nothing once ended


def test_close_rolls_back_open_transactions(path):
    for pessimistic in [False, True]:
        db = strata.open(path, transaction_db=pessimistic)
        db[b"kept"] = b"1"
        t = db.transaction()
        t[b"lost"] = b"1"
        it = t.items()
        db.close()
        assert db.closed
        assert not t.active
        with pytest.raises(strata.Unavailable, match="rolled back when its database was closed"):
            t.get(b"kept")
        with pytest.raises(strata.Unavailable):
            t.commit()
        with pytest.raises(strata.Unavailable):
            next(it)
        t.rollback()
        with pytest.raises(strata.Unavailable, match="is closed"):
            db.transaction()
        db = strata.open(path)  # the lock was released: it opens again
        assert db[b"kept"] == b"1" and b"lost" not in db
        db.close()


def test_close_while_a_transaction_waits_for_a_lock(path):
    db = strata.open(path, transaction_db=True)
    holder = db.transaction()
    holder[b"k"] = b"holder"
    waiter = db.transaction(lock_timeout=2)
    outcome = []

    def wait():
        try:
            waiter[b"k"] = b"waiter"  # waits for the holder's lock
            outcome.append("locked")
        except strata.LockTimeout:
            outcome.append("timed out")

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.2)
    db.close()  # waits for the call in flight; ends both transactions
    thread.join()
    assert len(outcome) == 1
    assert not holder.active and not waiter.active
    with pytest.raises(strata.Unavailable):
        waiter.commit()
    with strata.open(path) as db:
        assert b"k" not in db


def test_transactions_across_column_families(path):
    db = strata.open(path, column_families={"cf": {}})
    cf = db.column_family("cf")
    with db.transaction() as t:
        t.put(b"k", b"in cf", column_family="cf")
        t.put(b"k", b"in default")
        assert t.get(b"k", column_family=cf) == b"in cf"
        assert list(t.items(column_family="cf")) == [(b"k", b"in cf")]
        t.delete(b"gone", column_family=cf)
    assert cf[b"k"] == b"in cf" and db[b"k"] == b"in default"
    with pytest.raises(strata.NotFound, match="no column family named 'nope'"):
        db.transaction().put(b"k", b"v", column_family="nope")
    db.close()


def test_merge_in_a_transaction(path):
    db = strata.open(path, merge_operator="uint64add")
    one = (1).to_bytes(8, "little")
    db.merge(b"n", one)
    with db.transaction() as t:
        t.merge(b"n", one)
        assert int.from_bytes(t[b"n"], "little") == 2
    assert int.from_bytes(db[b"n"], "little") == 2
    db.close()


def test_merge_without_an_operator_is_refused_at_the_call(anydb):
    t = anydb.transaction()
    with pytest.raises(strata.InvalidArgument, match="no merge operator"):
        t.merge(b"k", b"1")
    t.rollback()


def test_a_read_only_database_has_no_transactions(path):
    strata.open(path).close()
    db = strata.open(path, read_only=True)
    with pytest.raises(strata.Unavailable, match="read-only"):
        db.transaction()
    db.close()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda t: t.put("k", b"v"), TypeError, "key must be bytes, not str"),
        (lambda t: t.put(b"k", 1), TypeError, "value must be bytes"),
        (lambda t: t.merge(b"k", "1"), TypeError, "operand must be bytes"),
        (lambda t: t.get(1), TypeError, "key must be bytes"),
        (lambda t: t.get(b"k", for_update="yes"), TypeError, "for_update"),
        (lambda t: t.put(b"k", b"v", column_family=3), TypeError, "column_family"),
        (lambda t: t.items(start="a"), TypeError, "start must be bytes"),
    ],
)
def test_wrong_argument_types_name_the_argument(anydb, call, error, match):
    t = anydb.transaction()
    with pytest.raises(error, match=match):
        call(t)
    assert t.active  # a refused argument does not end the transaction
    t.rollback()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda db: db.transaction(sync="yes"), TypeError, "sync"),
        (lambda db: db.transaction(lock_timeout="1"), TypeError, "lock_timeout must be a number"),
        (lambda db: db.transaction(expiration=-1), ValueError, "expiration must be a finite"),
        (lambda db: db.transaction(deadlock_detect=1.5), TypeError, "deadlock_detect"),
    ],
)
def test_wrong_transaction_options_name_the_option(tdb, call, error, match):
    with pytest.raises(error, match=match):
        call(tdb)


def test_pessimistic_options_on_an_optimistic_database_are_refused(db):
    with pytest.raises(ValueError, match="lock_timeout applies to pessimistic transactions"):
        db.transaction(lock_timeout=1)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"lock_timeout": 1}, "lock_timeout needs transaction_db=True"),
        ({"transaction_db": True, "read_only": True}, "cannot be combined"),
        ({"transaction_db": True, "lock_timeout": -1}, "lock_timeout must be a finite"),
    ],
)
def test_bad_transaction_open_options(path, options, match):
    with pytest.raises(ValueError, match=match):
        strata.open(path, **options)


def test_transaction_db_reopens_as_a_plain_database(path):
    with strata.open(path, transaction_db=True) as db:
        with db.transaction() as t:
            t[b"k"] = b"v"
    with strata.open(path) as db:
        assert db[b"k"] == b"v"


def test_repr(anydb):
    t = anydb.transaction()
    kind = "pessimistic" if anydb.transaction_db else "optimistic"
    assert repr(t) == f"<strata.Transaction {kind} active>"
    t.commit()
    assert repr(t) == f"<strata.Transaction {kind} committed>"
