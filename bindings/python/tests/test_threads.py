"""One Db shared by several Python threads (the GIL is released inside engine calls)."""

import threading

import pytest

import strata

THREADS = 8
PER_THREAD = 2000


def run_all(targets):
    errors = []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # reported by the main thread
                errors.append(e)

        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_threads_write_and_read_at_once(path):
    with strata.open(path, write_buffer_size=256 * 1024) as db:

        def writer(t):
            def run():
                for i in range(PER_THREAD):
                    key = b"t%02d-%05d" % (t, i)
                    db[key] = key * 2
                    assert db[key] == key * 2
                    if i % 500 == 0:
                        # Scans overlapping the other threads' writes.
                        keys = list(db.keys(start=b"t%02d-" % t, end=b"t%02d." % t))
                        assert len(keys) == i + 1

            return run

        def batcher(t):
            def run():
                for i in range(PER_THREAD // 10):
                    with db.write_batch() as batch:
                        for j in range(10):
                            batch.put(b"b%02d-%05d" % (t, i * 10 + j), b"v")

            return run

        run_all([writer(t) for t in range(THREADS)] + [batcher(t) for t in range(2)])
        assert len(list(db.keys(b"t", b"u"))) == THREADS * PER_THREAD
        assert len(list(db.keys(b"b", b"c"))) == 2 * PER_THREAD
        db.flush()
    with strata.open(path) as db:
        assert db[b"t07-01999"] == b"t07-01999" * 2


def test_threads_share_an_iterator(db):
    n = 10000
    with db.write_batch() as batch:
        for i in range(n):
            batch[b"%06d" % i] = b""
    it = db.keys()
    seen = []
    lock = threading.Lock()

    def consume():
        for key in it:
            with lock:
                seen.append(key)

    run_all([consume] * 4)
    assert sorted(seen) == [b"%06d" % i for i in range(n)]


def test_close_while_other_threads_use_the_db(path):
    db = strata.open(path)
    stop = threading.Event()
    outcomes = []

    def user():
        i = 0
        while not stop.is_set():
            try:
                db[b"k%d" % i] = b"v"
                db.get(b"k%d" % i)
            except strata.Unavailable:
                outcomes.append("closed")
                return
            i += 1
        outcomes.append("stopped")

    threads = [threading.Thread(target=user) for _ in range(4)]
    for t in threads:
        t.start()
    db.close()
    stop.set()
    for t in threads:
        t.join()
    assert len(outcomes) == 4
    with pytest.raises(strata.Unavailable):
        db[b"a"]
