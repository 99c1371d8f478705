package io.strata;

/** The operating system reported an IO error; the message names the file (kind {@link ErrorKind#IO}). */
public class StrataIOException extends StrataException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public StrataIOException(String message) {
        super(ErrorKind.IO, message);
    }

    /** For subclasses. */
    protected StrataIOException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
