package io.strata;

/** A database, file or column family that must exist does not (kind {@link ErrorKind#NOT_FOUND}). */
public class NotFoundException extends StrataException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public NotFoundException(String message) {
        super(ErrorKind.NOT_FOUND, message);
    }

    /** For subclasses. */
    protected NotFoundException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
