"""Checkpoints and backups: openable copies of a running database."""

import pytest

import strata


def test_a_checkpoint_opens_with_the_data(db, tmp_path):
    db[b"a"] = b"1"
    db.checkpoint(tmp_path / "cp")
    db[b"b"] = b"2"
    with strata.open(tmp_path / "cp") as copy:
        assert copy[b"a"] == b"1"
        assert copy.get(b"b") is None


def test_a_checkpoint_refuses_an_existing_directory(db, tmp_path):
    (tmp_path / "cp").mkdir()
    with pytest.raises(strata.Error):
        db.checkpoint(tmp_path / "cp")


def test_backups_are_made_listed_verified_restored_and_deleted(db, tmp_path):
    engine = strata.BackupEngine(tmp_path / "backups")
    db[b"a"] = b"1"
    first = engine.create_backup(db)
    db[b"b"] = b"2"
    second = engine.create_backup(db)
    assert (first["id"], second["id"]) == (1, 2)
    listed = engine.list_backups()
    assert [b["id"] for b in listed] == [1, 2]
    assert listed[0]["num_files"] > 0 and listed[0]["size"] > 0 and listed[0]["timestamp"] > 0
    engine.verify(1)
    with pytest.raises(strata.NotFound):
        engine.verify(9)
    engine.restore(1, tmp_path / "restored")
    with strata.open(tmp_path / "restored") as restored:
        assert restored[b"a"] == b"1"
        assert restored.get(b"b") is None
    assert engine.purge_old_backups(1) == [1]
    engine.delete(2)
    assert engine.list_backups() == []
