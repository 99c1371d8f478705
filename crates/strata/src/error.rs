//! The one error type of the engine.
//!
//! Every fallible call returns [`Result<T>`]. An [`Error`] says what kind of failure it is
//! ([`Error::kind`]) and carries what a person needs to find the cause: the path of the file
//! for IO errors, the file and byte offset for corruption.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The result type of every fallible Strata call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The broad class of an [`Error`], for callers that branch on it.
///
/// # Examples
///
/// ```
/// use strata::{Db, ErrorKind, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let second = Db::open(dir.path(), Options::default()); // the LOCK is held
/// let what = match second.map(|_| ()).unwrap_err().kind() {
///     ErrorKind::Busy => "open elsewhere: retry later",
///     ErrorKind::Corruption => "damaged: see strata::repair",
///     ErrorKind::Io => "the disk or the permissions",
///     _ => "something else", // the enum is non-exhaustive: keep a wildcard arm
/// };
/// assert_eq!(what, "open elsewhere: retry later");
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system reported an IO error.
    Io,
    /// Data on disk failed a checksum or could not be decoded.
    Corruption,
    /// The caller passed an argument or option the engine cannot accept.
    InvalidArgument,
    /// The database is held by another process or handle.
    Busy,
    /// A database or file that must exist does not.
    NotFound,
    /// The database is in a state that refuses the call (closed, or stopped by an error).
    Unavailable,
}

/// Why a transaction's call failed with [`ErrorKind::Busy`] (RocksDB's `Busy` and
/// `TimedOut` statuses with their subcodes). Each leaves nothing written by the failed call;
/// running the transaction again may succeed.
///
/// The examples of [`OptimisticTransaction`](crate::OptimisticTransaction) (a conflict)
/// and [`TransactionOptions`](crate::TransactionOptions) (a lock timeout) read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TxnFailure {
    /// A key the transaction wrote or read for update was written by another since the
    /// transaction's snapshot (an optimistic commit, or a pessimistic lock with a snapshot).
    Conflict,
    /// Waiting for a lock would have closed a cycle of transactions waiting for each other.
    Deadlock,
    /// A lock wait outlasted the transaction's lock timeout.
    LockTimeout,
    /// The transaction outlived its expiration and other transactions took its locks.
    Expired,
}

/// An error from Strata.
///
/// # Examples
///
/// ```
/// use strata::{Db, Error, ErrorKind, Options, MAX_KEY_LEN};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let err = db.put(vec![0u8; MAX_KEY_LEN + 1], b"v").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
/// match &err {
///     Error::InvalidArgument(message) => assert!(message.contains("over the limit")),
///     other => panic!("unexpected error: {other}"), // the enum is non-exhaustive
/// }
/// assert_eq!(db.get(vec![0u8; 8])?, None); // nothing was written
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An IO call failed on `path`.
    Io {
        /// The file or directory the call was about.
        path: PathBuf,
        /// What the engine was doing, e.g. "append", "fdatasync".
        op: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
    /// Bytes on disk are not what the format says they must be.
    Corruption {
        /// The file holding the bad bytes.
        file: PathBuf,
        /// Byte offset in `file` where the bad record or block starts.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// A bad argument or option; the message names it.
    InvalidArgument(String),
    /// The database is locked by another process or handle.
    Busy(String),
    /// A transaction could not go on (see [`TxnFailure`]); its kind is [`ErrorKind::Busy`].
    Transaction {
        /// Which failure.
        failure: TxnFailure,
        /// What happened, naming the key.
        message: String,
    },
    /// Something that must exist does not; the message names it.
    NotFound(String),
    /// The database refuses the call in its current state.
    Unavailable(String),
    /// A merge operator failed to combine the operands of a key. Its kind is
    /// [`ErrorKind::Corruption`]: the stored operands cannot be turned into a value.
    MergeFailed {
        /// The operator's name.
        operator: String,
        /// The user key whose operands failed, printable (`\xNN` for bytes that are not).
        key: String,
        /// What the operator said.
        reason: String,
    },
}

impl Error {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { .. } => ErrorKind::Io,
            Error::Corruption { .. } | Error::MergeFailed { .. } => ErrorKind::Corruption,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Busy(_) | Error::Transaction { .. } => ErrorKind::Busy,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Unavailable(_) => ErrorKind::Unavailable,
        }
    }

    /// Which transaction failure this is, if it is one.
    pub fn txn_failure(&self) -> Option<TxnFailure> {
        match self {
            Error::Transaction { failure, .. } => Some(*failure),
            _ => None,
        }
    }

    /// A transaction failure.
    pub(crate) fn txn(failure: TxnFailure, message: String) -> Error {
        Error::Transaction { failure, message }
    }

    /// An IO error on `path` during `op`.
    pub fn io(op: &'static str, path: impl AsRef<Path>, source: io::Error) -> Error {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            op,
            source,
        }
    }

    /// Corruption found in `file` at byte `offset`.
    pub fn corruption(file: impl AsRef<Path>, offset: u64, reason: impl Into<String>) -> Error {
        Error::Corruption {
            file: file.as_ref().to_path_buf(),
            offset,
            reason: reason.into(),
        }
    }

    /// A copy of this error for handing to several waiters (group commit followers).
    /// The `io::Error` source is rebuilt from its kind and message.
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io { path, op, source } => Error::Io {
                path: path.clone(),
                op,
                source: io::Error::new(source.kind(), source.to_string()),
            },
            Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            Error::InvalidArgument(m) => Error::InvalidArgument(m.clone()),
            Error::Busy(m) => Error::Busy(m.clone()),
            Error::Transaction { failure, message } => Error::Transaction {
                failure: *failure,
                message: message.clone(),
            },
            Error::NotFound(m) => Error::NotFound(m.clone()),
            Error::Unavailable(m) => Error::Unavailable(m.clone()),
            Error::MergeFailed {
                operator,
                key,
                reason,
            } => Error::MergeFailed {
                operator: operator.clone(),
                key: key.clone(),
                reason: reason.clone(),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, op, source } => {
                write!(f, "IO error: {op} {}: {source}", path.display())
            }
            Error::Corruption {
                file,
                offset,
                reason,
            } => write!(
                f,
                "corruption in {} at offset {offset}: {reason}",
                file.display()
            ),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Busy(m) | Error::Transaction { message: m, .. } => write!(f, "busy: {m}"),
            Error::NotFound(m) => write!(f, "not found: {m}"),
            Error::Unavailable(m) => write!(f, "unavailable: {m}"),
            Error::MergeFailed {
                operator,
                key,
                reason,
            } => write!(
                f,
                "corruption: merge operator '{operator}' failed for key '{key}': {reason}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
