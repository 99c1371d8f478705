//! The exception classes: one base, one subclass per `strata::ErrorKind`, and below `Busy`
//! one per `strata::TxnFailure`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;

create_exception!(
    strata,
    Error,
    PyException,
    "Base class of the errors the engine reports."
);
create_exception!(
    strata,
    NotFound,
    Error,
    "A database or file that must exist does not (opening a missing database with \
     create_if_missing=False, a column family that does not exist)."
);
create_exception!(
    strata,
    Corruption,
    Error,
    "Data on disk failed a checksum or could not be decoded, or a merge operator could not \
     combine a key's operands."
);
create_exception!(
    strata,
    InvalidArgument,
    Error,
    "An argument or option the engine cannot accept; the message names it."
);
create_exception!(
    strata,
    Busy,
    Error,
    "The database is locked by another process or handle, or a transaction could not go on \
     (a TransactionError)."
);
create_exception!(
    strata,
    Unavailable,
    Error,
    "The database refuses the call in its state: closed, read-only, or stopped by an error."
);
create_exception!(
    strata,
    IOError,
    Error,
    "The operating system reported an IO error; the message names the file."
);
create_exception!(
    strata,
    TransactionError,
    Busy,
    "A transaction could not go on: the base of TransactionConflict, Deadlock, LockTimeout \
     and TransactionExpired (a strata.Busy, so catching Busy catches them all). Retrying the \
     transaction from its start usually succeeds."
);
create_exception!(
    strata,
    TransactionConflict,
    TransactionError,
    "A key the transaction wrote or read for update was written by someone else after the \
     transaction's snapshot: an optimistic commit (nothing was written, the transaction \
     ended), or a pessimistic lock with set_snapshot=True."
);
create_exception!(
    strata,
    Deadlock,
    TransactionError,
    "Waiting for a key's lock would close a cycle of pessimistic transactions waiting for \
     each other; the transaction goes on without that lock."
);
create_exception!(
    strata,
    LockTimeout,
    TransactionError,
    "A pessimistic transaction waited for a key's lock longer than its lock_timeout; the \
     transaction goes on without that lock."
);
create_exception!(
    strata,
    TransactionExpired,
    TransactionError,
    "A pessimistic transaction outlived its expiration and other transactions took its \
     locks: its commit wrote nothing."
);
