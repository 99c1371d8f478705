package io.strata;

/** Data on disk failed a checksum or could not be decoded, or a merge operator could not combine a key's operands (kind {@link ErrorKind#CORRUPTION}). */
public class CorruptionException extends StrataException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public CorruptionException(String message) {
        super(ErrorKind.CORRUPTION, message);
    }

    /** For subclasses. */
    protected CorruptionException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
