//! The adapter's error: the engine's, a file system call's, or a stored record that does not
//! decode.

use std::fmt;

/// An error of the storage adapter or the node.
#[derive(Debug)]
pub enum Error {
    /// The engine failed.
    Engine(strata::Error),
    /// A file system call failed; the string says what was being done.
    Io(String, std::io::Error),
    /// A stored record or snapshot is not what it must be.
    Corrupt(String),
    /// The directory or the arguments are not usable; the message names the problem.
    Invalid(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Engine(e) => write!(f, "{e}"),
            Error::Io(what, e) => write!(f, "{what}: {e}"),
            Error::Corrupt(what) => write!(f, "corrupt: {what}"),
            Error::Invalid(what) => write!(f, "{what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Engine(e) => Some(e),
            Error::Io(_, e) => Some(e),
            _ => None,
        }
    }
}

impl From<strata::Error> for Error {
    fn from(e: strata::Error) -> Error {
        Error::Engine(e)
    }
}

/// Attaches what was being done to an IO error.
pub trait IoContext<T> {
    /// `Error::Io(what(), e)` on failure.
    fn context(self, what: impl FnOnce() -> String) -> Result<T, Error>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, Error> {
        self.map_err(|e| Error::Io(what(), e))
    }
}
