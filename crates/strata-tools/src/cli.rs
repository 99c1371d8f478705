//! What every command of the `strata` binary shares: the error type the commands return.

/// The error a command returns: any error, printed as `strata: {error}`. `Send` and `Sync`
/// so that the bench's worker threads can hand theirs back through a join.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
