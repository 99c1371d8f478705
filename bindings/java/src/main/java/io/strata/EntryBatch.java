package io.strata;

import java.util.Arrays;

/**
 * Entries read from a {@link StrataIterator} in one call ({@link
 * StrataIterator#readEntries(EntryBatch, int)}): one crossing into the native library for
 * many entries instead of one for each move, key and value. Reuse one batch for the next
 * reads: its buffer grows to the largest entry met and is kept.
 *
 * <pre>{@code
 * EntryBatch batch = new EntryBatch();
 * try (StrataIterator it = db.newIterator()) {
 *     it.seekToFirst();
 *     while (it.readEntries(batch, 100) > 0) {
 *         for (int i = 0; i < batch.size(); i++) {
 *             use(batch.key(i), batch.value(i));
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>The entries are in one byte array ({@link #buffer()}): {@link #keyOffset(int)}, {@link
 * #keyLength(int)}, {@link #valueOffset(int)} and {@link #valueLength(int)} locate each
 * without a copy. Not safe for concurrent use.
 */
public final class EntryBatch {
    /** The buffer's size when none is given: 64 KiB. */
    public static final int DEFAULT_BYTES = 64 << 10;

    /**
     * Entries as the native side writes them: per entry, a 4-byte big-endian length and the
     * key, then the same for the value.
     */
    byte[] buffer;
    /** Per entry: key offset, key length, value offset, value length. */
    private int[] offsets = new int[0];
    private int size;

    /** A batch with a buffer of {@link #DEFAULT_BYTES}. */
    public EntryBatch() {
        this(DEFAULT_BYTES);
    }

    /** A batch with a buffer of {@code bytes} to begin with (it grows when an entry needs more). */
    public EntryBatch(int bytes) {
        if (bytes < 0) {
            throw new InvalidArgumentException(
                    "invalid argument: an EntryBatch of " + bytes + " bytes: the size must not be negative");
        }
        buffer = new byte[bytes];
    }

    /** The number of entries the last read left. */
    public int size() {
        return size;
    }

    /** A copy of the key of entry {@code i}. */
    public byte[] key(int i) {
        int at = check(i);
        return Arrays.copyOfRange(buffer, offsets[at], offsets[at] + offsets[at + 1]);
    }

    /** A copy of the value of entry {@code i}. */
    public byte[] value(int i) {
        int at = check(i);
        return Arrays.copyOfRange(buffer, offsets[at + 2], offsets[at + 2] + offsets[at + 3]);
    }

    /** The array the entries are in; valid until the next read into this batch. */
    public byte[] buffer() {
        return buffer;
    }

    /** Where the key of entry {@code i} starts in {@link #buffer()}. */
    public int keyOffset(int i) {
        return offsets[check(i)];
    }

    /** The length of the key of entry {@code i}. */
    public int keyLength(int i) {
        return offsets[check(i) + 1];
    }

    /** Where the value of entry {@code i} starts in {@link #buffer()}. */
    public int valueOffset(int i) {
        return offsets[check(i) + 2];
    }

    /** The length of the value of entry {@code i}. */
    public int valueLength(int i) {
        return offsets[check(i) + 3];
    }

    private int check(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("entry " + i + " of a batch of " + size);
        }
        return 4 * i;
    }

    /** Grows the buffer to hold at least {@code bytes}. */
    void grow(int bytes) {
        buffer = new byte[Math.max(bytes, buffer.length * 2)];
    }

    /** Locates the {@code count} entries the native side just wrote. */
    void parse(int count) {
        if (offsets.length < 4 * count) {
            offsets = new int[4 * count];
        }
        int at = 0;
        for (int i = 0; i < 4 * count; i += 2) {
            int length = ((buffer[at] & 0xff) << 24) | ((buffer[at + 1] & 0xff) << 16)
                    | ((buffer[at + 2] & 0xff) << 8) | (buffer[at + 3] & 0xff);
            offsets[i] = at + 4;
            offsets[i + 1] = length;
            at += 4 + length;
        }
        size = count;
    }

    /** Empties the batch (before a read, so that a read that throws leaves it empty). */
    void clear() {
        size = 0;
    }
}
