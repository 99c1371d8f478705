package io.strata;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code manual_wal_flush} and {@link Strata#flushWal}: a copy of the directory taken while the
 * database is open is what a restart after a kill finds; held writes are not in it until
 * {@code flushWal}.
 */
class FlushWalTest {
    @TempDir
    Path dir;

    static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    /**
     * The value of {@code key} in a copy of {@code db}'s directory (its lock file left out). A
     * file deleted while the copy is made is an obsolete one (a WAL that an open replayed into
     * a table), which the copy does without.
     */
    private byte[] afterAKill(Path db, String key) throws IOException {
        Path copy = Files.createTempDirectory(dir, "copy");
        try (Stream<Path> files = Files.list(db)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().equals("LOCK")) {
                    try {
                        Files.copy(f, copy.resolve(f.getFileName()));
                    } catch (NoSuchFileException deleted) {
                        // obsolete: see above
                    }
                }
            }
        }
        try (Strata reopened = Strata.open(copy, new Options())) {
            return reopened.get(b(key));
        }
    }

    @Test
    void heldWritesReachTheFileAtFlushWal() throws IOException {
        Path path = dir.resolve("db");
        try (Strata db = Strata.open(path, new Options().set("manual_wal_flush", true))) {
            db.put(b("a"), b("1"));
            assertNull(afterAKill(path, "a"), "held");
            db.flushWal(false);
            assertArrayEquals(b("1"), afterAKill(path, "a"));
            db.put(b("b"), b("2"));
            db.flushWal(true);
            assertArrayEquals(b("2"), afterAKill(path, "b"));
        }
        try (Strata db = Strata.open(path, new Options())) {
            db.put(b("c"), b("3"));
            assertArrayEquals(b("3"), afterAKill(path, "c"), "without the option: in the file");
            db.flushWal(false);
        }
    }

    /**
     * {@code wal_compression}: a restart (opened without the option) replays the compressed
     * records; an unknown algorithm is refused by name.
     */
    @Test
    void aCompressedWalReplaysAfterAKill() throws IOException {
        String value = "a value that repeats, ".repeat(40);
        for (String compression : new String[] {"snappy", "lz4", "zstd"}) {
            Path path = dir.resolve("compressed-" + compression);
            try (Strata db = Strata.open(path, new Options().set("wal_compression", compression))) {
                for (int i = 0; i < 100; i++) {
                    db.put(b("key-" + i), b(value + i));
                }
                assertArrayEquals(b(value + 0), afterAKill(path, "key-0"), compression);
                assertArrayEquals(b(value + 99), afterAKill(path, "key-99"), compression);
            }
        }
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> Strata.open(dir.resolve("zlib"), new Options().set("wal_compression", "zlib")));
        assertEquals("invalid argument: option wal_compression: unknown value 'zlib' "
                + "(none, snappy, lz4 or zstd)", e.getMessage());
    }

    @Test
    void flushWalOnAClosedDatabaseThrows() {
        Strata db = Strata.open(dir.resolve("closed"), new Options());
        db.close();
        assertThrows(UnavailableException.class, () -> db.flushWal(false));
    }
}
