//! The exception classes: one base, one subclass per `strata::ErrorKind`.

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
    "The database is locked by another process or handle."
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
