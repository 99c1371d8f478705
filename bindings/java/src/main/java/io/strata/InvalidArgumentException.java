package io.strata;

/** An argument or option that cannot be accepted: null, an unknown option, a key too long, a call on an iterator off its entries (kind {@link ErrorKind#INVALID_ARGUMENT}). The message names it. */
public class InvalidArgumentException extends StrataException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public InvalidArgumentException(String message) {
        super(ErrorKind.INVALID_ARGUMENT, message);
    }

    /** For subclasses. */
    protected InvalidArgumentException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
