//! Errors: everything this storage reports reaches GlueSQL as its `Error::StorageMsg`, the
//! variant GlueSQL keeps for storages, with a message that starts with `[StrataStorage]` and
//! names what went wrong.

pub use gluesql_core::error::Error;

/// The result type of this crate: GlueSQL's.
pub type Result<T> = std::result::Result<T, Error>;

/// Bytes read back from the database that this code cannot decode.
pub(crate) fn corrupt(message: impl std::fmt::Display) -> Error {
    Error::StorageMsg(format!("[StrataStorage] corrupt data: {message}"))
}

/// A request this storage refuses (for example a second `BEGIN`).
pub(crate) fn refused(message: impl std::fmt::Display) -> Error {
    Error::StorageMsg(format!("[StrataStorage] {message}"))
}

/// An error from the engine below.
pub(crate) fn engine(e: strata::Error) -> Error {
    Error::StorageMsg(format!("[StrataStorage] {e}"))
}
