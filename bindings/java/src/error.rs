//! How failures cross into Java: every native method runs its body through [`run`], which
//! catches panics (none may unwind into the JVM) and turns every error into a pending Java
//! exception, then returns the type's default (0, false, null) which Java never reads.
//!
//! Engine errors become the `io.strata` exception of their kind (`NotFoundException`,
//! `CorruptionException`, ...; a transaction failure the one of its cause, all below
//! `BusyException`); a bad argument found here becomes `InvalidArgumentException` naming
//! the argument; a call on a closed handle `UnavailableException`; a panic (a bug) a
//! `StrataException` whose message says so.

use jni::errors::ErrorPolicy;
use jni::strings::JNIString;
use jni::{Env, EnvUnowned};
use strata::{ErrorKind, TxnFailure};

/// A failure of a native call.
#[derive(Debug)]
pub enum BindError {
    /// The engine refused or failed.
    Engine(strata::Error),
    /// An argument this binding cannot accept (null, a heap buffer where a direct one is
    /// needed, an unknown option); the message names it.
    Arg(String),
    /// The handle's object was closed; the message names it.
    Closed(String),
    /// A JNI call failed; when it threw, that exception is already pending.
    Jni(jni::errors::Error),
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindError::Engine(e) => write!(f, "{e}"),
            BindError::Arg(m) => write!(f, "invalid argument: {m}"),
            BindError::Closed(m) => write!(f, "unavailable: {m}"),
            BindError::Jni(e) => write!(f, "JNI call failed: {e}"),
        }
    }
}

impl std::error::Error for BindError {}

impl From<strata::Error> for BindError {
    fn from(e: strata::Error) -> Self {
        BindError::Engine(e)
    }
}

impl From<jni::errors::Error> for BindError {
    fn from(e: jni::errors::Error) -> Self {
        BindError::Jni(e)
    }
}

/// The result of a native call's body.
pub type Result<T> = std::result::Result<T, BindError>;

/// The exception class (JNI name) of an engine error.
fn class_of(e: &strata::Error) -> &'static str {
    if let Some(failure) = e.txn_failure() {
        return match failure {
            TxnFailure::Conflict => "io/strata/TransactionConflictException",
            TxnFailure::Deadlock => "io/strata/DeadlockException",
            TxnFailure::LockTimeout => "io/strata/LockTimeoutException",
            TxnFailure::Expired => "io/strata/TransactionExpiredException",
            // A cause the engine may add later: the class of every transaction failure.
            _ => "io/strata/TransactionException",
        };
    }
    match e.kind() {
        ErrorKind::Io => "io/strata/StrataIOException",
        ErrorKind::Corruption => "io/strata/CorruptionException",
        ErrorKind::InvalidArgument => "io/strata/InvalidArgumentException",
        ErrorKind::Busy => "io/strata/BusyException",
        ErrorKind::NotFound => "io/strata/NotFoundException",
        ErrorKind::Unavailable => "io/strata/UnavailableException",
        // A kind the engine may add later: the base class, which every handler catches.
        _ => "io/strata/StrataException",
    }
}

/// Throws the Java exception of a failure (unless one is pending already).
struct ThrowStrata;

impl<T: Default> ErrorPolicy<T, BindError> for ThrowStrata {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        err: BindError,
    ) -> jni::errors::Result<T> {
        if env.exception_check() {
            // A JNI call threw (an OutOfMemoryError, say): that exception goes to Java.
            return Ok(T::default());
        }
        let (class, message) = match &err {
            BindError::Engine(e) => (class_of(e), e.to_string()),
            BindError::Arg(_) => ("io/strata/InvalidArgumentException", err.to_string()),
            BindError::Closed(_) => ("io/strata/UnavailableException", err.to_string()),
            BindError::Jni(_) => ("io/strata/StrataException", err.to_string()),
        };
        // `throw_new` reports the exception it raised as an error: the pending exception is
        // the outcome we want, so that error is not one.
        let _ = env.throw_new(JNIString::from(class), JNIString::from(message));
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let what = match payload.downcast_ref::<&'static str>() {
            Some(s) => (*s).to_string(),
            None => match payload.downcast_ref::<String>() {
                Some(s) => s.clone(),
                None => "a panic without a message".to_string(),
            },
        };
        if !env.exception_check() {
            let message = format!("internal error in the native library (a bug): {what}");
            let _ = env.throw_new(
                JNIString::from("io/strata/StrataException"),
                JNIString::from(message),
            );
        }
        Ok(T::default())
    }
}

/// Runs the body of a native method: its errors and panics become pending Java exceptions
/// and the method returns `T::default()`.
pub fn run<'local, T, F>(mut env: EnvUnowned<'local>, body: F) -> T
where
    T: Default,
    F: FnOnce(&mut Env<'local>) -> Result<T>,
{
    env.with_env(body).resolve::<ThrowStrata>()
}
