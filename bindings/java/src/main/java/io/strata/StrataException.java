package io.strata;

/**
 * An error reported by Strata. Each {@link ErrorKind} has a subclass ({@link
 * NotFoundException}, {@link CorruptionException}, ...), so callers can catch the kind they
 * handle; {@link #kind()} names it too.
 *
 * <p>Unchecked, as the engine's errors are rarely recoverable at the call site and checked
 * exceptions do not cross lambdas.
 */
public class StrataException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;

    /** Thrown by the native library for a failure of no known kind, or a bug. */
    public StrataException(String message) {
        this(ErrorKind.OTHER, message);
    }

    /** An exception of kind {@code kind}. */
    protected StrataException(ErrorKind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** The kind of failure. */
    public ErrorKind kind() {
        return kind;
    }
}
