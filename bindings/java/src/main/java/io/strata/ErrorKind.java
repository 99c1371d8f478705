package io.strata;

/** The broad class of a {@link StrataException}, as the engine's {@code ErrorKind}. */
public enum ErrorKind {
    /** The operating system reported an IO error; the message names the file. */
    IO,
    /** Data on disk failed a checksum or could not be decoded. */
    CORRUPTION,
    /** An argument or option the engine or this binding cannot accept; the message names it. */
    INVALID_ARGUMENT,
    /** The database is held by another process or handle, or a transaction could not go on. */
    BUSY,
    /** A database or file that must exist does not. */
    NOT_FOUND,
    /** The object refuses the call in its state: closed, read-only, or stopped by an error. */
    UNAVAILABLE,
    /** A failure of a kind this version does not know, or a bug in the native library. */
    OTHER
}
