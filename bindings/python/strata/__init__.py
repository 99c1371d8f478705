"""Strata: a persistent, ordered key-value store (an LSM tree), from Python.

Keys and values are bytes. Open a database with :func:`open`; it behaves like a mapping
from bytes to bytes in key order::

    import strata

    with strata.open("/tmp/example") as db:
        db[b"apple"] = b"red"
        assert db[b"apple"] == b"red"
        for key, value in db.items(start=b"a", end=b"b"):
            print(key, value)
        with db.transaction() as txn:    # commits at the end, rolls back on an exception
            txn[b"banana"] = txn.get(b"apple", for_update=True)

See the package README for the whole API, the error classes and the threading notes.
"""

from ._strata import (
    FORMAT_VERSION,
    BackupEngine,
    Busy,
    ColumnFamily,
    Corruption,
    Db,
    Deadlock,
    Error,
    InvalidArgument,
    IOError,
    Iterator,
    LockTimeout,
    NotFound,
    Snapshot,
    SstWriter,
    Transaction,
    TransactionConflict,
    TransactionError,
    TransactionExpired,
    TxnCursor,
    Unavailable,
    UpdatesIterator,
    WriteBatch,
    list_column_families,
    open,
    open_as_secondary,
    repair,
)

__all__ = [
    "FORMAT_VERSION",
    "BackupEngine",
    "Busy",
    "ColumnFamily",
    "Corruption",
    "Db",
    "Deadlock",
    "Error",
    "IOError",
    "InvalidArgument",
    "Iterator",
    "LockTimeout",
    "NotFound",
    "Snapshot",
    "SstWriter",
    "Transaction",
    "TransactionConflict",
    "TransactionError",
    "TransactionExpired",
    "TxnCursor",
    "Unavailable",
    "UpdatesIterator",
    "WriteBatch",
    "list_column_families",
    "open",
    "open_as_secondary",
    "repair",
]
