"""Merge operators and compaction filters written in Python, called by the engine (also
from its background threads) with the GIL taken only for the call."""

import threading

import pytest

import strata


def keep_max(key, existing, operands):
    return max([existing] + operands if existing is not None else operands)


def test_a_callable_merge_operator(path):
    with strata.open(path, merge_operator=keep_max) as db:
        db[b"score"] = b"0350"
        db.merge(b"score", b"0420")
        db.merge(b"score", b"0390")
        assert db[b"score"] == b"0420"
        db.flush()
        db.merge(b"score", b"0100")
        db.compact_range()  # resolved in a background compaction
        assert db[b"score"] == b"0420"


class Counter:
    """A merge operator object: full and partial merges, and a name."""

    name = "counter"

    def __init__(self):
        self.partials = 0

    def full_merge(self, key, existing, operands):
        total = int(existing or b"0") + sum(int(o) for o in operands)
        return str(total).encode()

    def partial_merge(self, key, operands):
        self.partials += 1
        return str(sum(int(o) for o in operands)).encode()


def test_a_merge_operator_object(path):
    op = Counter()
    with strata.open(path, merge_operator=op) as db:
        for _ in range(10):
            db.merge(b"n", b"2")
        assert db[b"n"] == b"20"
        db.flush()
        db.compact_range()
        assert db[b"n"] == b"20"


def test_an_exception_in_a_merge_fails_the_read_naming_it(path):
    def broken(key, existing, operands):
        raise ValueError("no merging today")

    with strata.open(path, merge_operator=broken) as db:
        db.merge(b"k", b"x")
        with pytest.raises(strata.Error, match="no merging today"):
            db.get(b"k")


def test_a_merge_must_return_bytes(path):
    with strata.open(path, merge_operator=lambda k, e, o: "text") as db:
        db.merge(b"k", b"x")
        with pytest.raises(strata.Error, match="must return bytes"):
            db.get(b"k")


def test_a_bad_merge_operator_is_refused(path):
    with pytest.raises(TypeError, match="merge_operator"):
        strata.open(path, merge_operator=42)
    with pytest.raises(ValueError, match="unknown merge operator"):
        strata.open(path, merge_operator="sum")


def test_a_compaction_filter_keeps_removes_and_changes(path):
    seen = []

    def cleanup(level, key, value, is_merge_operand):
        seen.append(threading.current_thread() is threading.main_thread())
        if key.startswith(b"tmp/"):
            return True
        if key.startswith(b"up/"):
            return value.upper()
        return None

    with strata.open(path, compaction_filter=cleanup) as db:
        db[b"tmp/x"] = b"partial"
        db[b"up/name"] = b"alice"
        db[b"keep"] = b"as is"
        db.flush()
        assert db[b"tmp/x"] == b"partial"  # flushes do not filter
        db.compact_range()
        assert db.get(b"tmp/x") is None
        assert db[b"up/name"] == b"ALICE"
        assert db[b"keep"] == b"as is"
    assert len(seen) == 3


def test_a_compaction_filter_error_fails_the_compaction(path):
    def broken(level, key, value, is_merge_operand):
        raise RuntimeError("filter broke")

    with strata.open(path, compaction_filter=broken) as db:
        db[b"a"] = b"1"
        db.flush()
        with pytest.raises(strata.Error, match="filter broke"):
            db.compact_range()
        assert db[b"a"] == b"1"


def test_a_filter_returning_something_else_is_an_error(path):
    with strata.open(path, compaction_filter=lambda *a: 3) as db:
        db[b"a"] = b"1"
        db.flush()
        with pytest.raises(strata.Error, match="None, a bool or bytes"):
            db.compact_range()


def test_callbacks_run_beside_other_python_threads(path):
    """Threads that hold the GIL between engine calls do not starve the callbacks, and a
    Db collected without close() does not deadlock on them."""
    db = strata.open(path, merge_operator=keep_max, write_buffer_size=64 * 1024)
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(range(1000))

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        for i in range(2000):
            db.merge(b"k%d" % (i % 50), b"%06d" % i)
        db.compact_range()
        assert db[b"k0"] == b"001950"
    finally:
        stop.set()
        spinner.join()
    del db  # closed by the collector, with the GIL released


def test_prefix_extractor_and_ttl_options(path, tmp_path):
    with strata.open(path, prefix_extractor="fixed:3") as db:
        db[b"aaa1"] = b"x"
        assert db[b"aaa1"] == b"x"
    with pytest.raises(ValueError, match="prefix_extractor"):
        strata.open(tmp_path / "p2", prefix_extractor="sideways:3")
    with strata.open(tmp_path / "ttl", ttl=3600) as db:
        db[b"t"] = b"v"
        assert db[b"t"] == b"v"


def test_a_python_comparator_orders_keys(path):
    def by_length(a, b):
        return (len(a) > len(b)) - (len(a) < len(b)) or (a > b) - (a < b)

    with strata.open(path, comparator=by_length) as db:
        for key in [b"100", b"9", b"10"]:
            db[key] = b""
        assert list(db.keys()) == [b"9", b"10", b"100"]
        db.flush()
        assert list(db.keys(start=b"10")) == [b"10", b"100"]
    with pytest.raises(strata.Error, match="by_length"):
        strata.open(path)  # another order's name: refused


def test_builtin_comparator_names(tmp_path):
    with strata.open(tmp_path / "r", comparator="reverse_bytewise") as db:
        db[b"a"] = b"1"
        db[b"b"] = b"2"
        assert list(db.keys()) == [b"b", b"a"]
    with pytest.raises(ValueError, match="unknown comparator"):
        strata.open(tmp_path / "x", comparator="sideways")


def test_event_listeners_see_flushes_and_compactions(path):
    events = []
    with strata.open(path, listeners=[events.append]) as db:
        db[b"a"] = b"1"
        db.flush()
        db[b"a"] = b"2"
        db.flush()
        db.compact_range()
    kinds = [e["kind"] for e in events]
    assert kinds.count("flush_begin") == 2 and kinds.count("flush_completed") == 2
    assert "compaction_completed" in kinds and "table_file_created" in kinds
    flushed = next(e for e in events if e["kind"] == "flush_completed")
    assert flushed["cf_name"] == "default" and flushed["table_entries"] == 1
    done = next(e for e in events if e["kind"] == "compaction_completed")
    assert done["error"] is None and done["reason"] == "Manual"


def test_put_with_ttl_resume_and_repair(tmp_path):
    with strata.open(tmp_path / "ttl", ttl=3600) as db:
        db.put_with_ttl(b"k", b"v", 60)
        assert db[b"k"] == b"v"
        db.resume()
    with strata.open(tmp_path / "plain") as db:
        with pytest.raises(strata.InvalidArgument, match="ttl"):
            db.put_with_ttl(b"k", b"v", 60)
        db[b"kept"] = b"1"
        db.flush()
    assert strata.repair(tmp_path / "plain") is True
    with strata.open(tmp_path / "plain") as db:
        assert db[b"kept"] == b"1"


def test_a_listener_that_raises_is_reported_and_the_job_goes_on(path, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: reported.append(u.exc_value))

    def broken(event):
        raise RuntimeError("listener broke")

    with strata.open(path, listeners=[broken]) as db:
        db[b"a"] = b"1"
        db.flush()
        assert db[b"a"] == b"1"
        assert db.property("strata.num-files-at-level0") == "1"
    assert any("listener broke" in str(e) for e in reported)


def test_a_comparator_that_raises_is_reported(path, monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: reported.append(u.exc_value))

    def fussy(a, b):
        if a == b"bad" or b == b"bad":
            raise ValueError("cannot order bad")
        return (a > b) - (a < b)

    with strata.open(path, comparator=fussy) as db:
        db[b"a"] = b"1"
        db[b"bad"] = b"2"
        assert db[b"bad"] == b"2"  # compared bytewise, as the fallback says
    assert any("cannot order bad" in str(e) for e in reported)


def test_bad_callback_options_are_refused(tmp_path):
    with pytest.raises(TypeError, match="compaction_filter"):
        strata.open(tmp_path / "a", compaction_filter=42)
    with pytest.raises(TypeError, match="comparator"):
        strata.open(tmp_path / "b", comparator=42)
    with pytest.raises(TypeError, match="listeners"):
        strata.open(tmp_path / "c", listeners=[42])


def test_prefix_seeks(path):
    with strata.open(path, prefix_extractor="fixed:3") as db:
        for key in [b"aaa1", b"aaa2", b"bbb1"]:
            db[key] = b"x"
        assert list(db.keys(b"aaa", prefix_same_as_start=True)) == [b"aaa1", b"aaa2"]
        assert list(db.keys(b"aaa", total_order_seek=True)) == [b"aaa1", b"aaa2", b"bbb1"]
        cf = db.create_column_family("p", prefix_extractor="fixed:1")
        cf[b"a1"] = b""
        cf[b"b1"] = b""
        assert list(cf.keys(prefix_same_as_start=True)) == [b"a1"]
