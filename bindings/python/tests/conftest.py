import pytest

import strata


@pytest.fixture
def path(tmp_path):
    """A directory for a fresh database."""
    return tmp_path / "db"


@pytest.fixture
def db(path):
    """A fresh database, closed after the test."""
    d = strata.open(path)
    yield d
    d.close()
