package io.strata;

/** The object refuses the call in its state: closed, read-only, or stopped by an error (kind {@link ErrorKind#UNAVAILABLE}). */
public class UnavailableException extends StrataException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public UnavailableException(String message) {
        super(ErrorKind.UNAVAILABLE, message);
    }

    /** For subclasses. */
    protected UnavailableException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
