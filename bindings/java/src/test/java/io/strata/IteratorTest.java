package io.strata;

import static io.strata.BasicTest.b;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IteratorTest {
    @TempDir
    Path dir;

    static List<String> forward(StrataIterator it) {
        List<String> keys = new ArrayList<>();
        for (it.seekToFirst(); it.isValid(); it.next()) {
            keys.add(new String(it.key(), UTF_8));
        }
        return keys;
    }

    static List<String> backward(StrataIterator it) {
        List<String> keys = new ArrayList<>();
        for (it.seekToLast(); it.isValid(); it.prev()) {
            keys.add(new String(it.key(), UTF_8));
        }
        return keys;
    }

    private static Strata filled(Path dir) {
        Strata db = Strata.open(dir, new Options());
        for (String k : new String[] {"a", "b", "c", "d", "e"}) {
            db.put(b(k), b("v" + k));
        }
        return db;
    }

    @Test
    void bothDirectionsAndSeeks() {
        try (Strata db = filled(dir); StrataIterator it = db.newIterator()) {
            assertEquals(List.of("a", "b", "c", "d", "e"), forward(it));
            assertEquals(List.of("e", "d", "c", "b", "a"), backward(it));
            assertTrue(it.seek(b("bb")));
            assertArrayEquals(b("c"), it.key());
            assertArrayEquals(b("vc"), it.value());
            assertTrue(it.seekForPrev(b("bb")));
            assertArrayEquals(b("b"), it.key());
            assertFalse(it.seek(b("z")));
        }
    }

    @Test
    void boundsLimitBothDirections() {
        ReadOptions bounded = new ReadOptions().lowerBound(b("b")).upperBound(b("d"));
        try (Strata db = filled(dir); StrataIterator it = db.newIterator(bounded)) {
            assertEquals(List.of("b", "c"), forward(it));
            assertEquals(List.of("c", "b"), backward(it));
        }
    }

    @Test
    void anIteratorReadsAsOfItsSnapshot() {
        try (Strata db = filled(dir); Snapshot snap = db.getSnapshot()) {
            db.delete(b("a"));
            db.put(b("f"), b("vf"));
            try (StrataIterator now = db.newIterator();
                    StrataIterator then = db.newIterator(new ReadOptions().snapshot(snap))) {
                assertEquals(List.of("b", "c", "d", "e", "f"), forward(now));
                assertEquals(List.of("a", "b", "c", "d", "e"), forward(then));
            }
        }
    }

    @Test
    void movingOrReadingOffAnEntryThrows() {
        try (Strata db = filled(dir); StrataIterator it = db.newIterator()) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, it::next);
            assertEquals("invalid argument: next() needs the iterator on an entry (isValid() is "
                    + "false): seek first", e.getMessage());
            assertThrows(InvalidArgumentException.class, it::prev);
            assertThrows(InvalidArgumentException.class, it::key);
            assertThrows(InvalidArgumentException.class, it::value);
            assertThrows(InvalidArgumentException.class, () -> it.seek(null));
        }
    }

    @Test
    void anIteratorThrowsOnceItsDatabaseIsClosed() {
        Strata db = filled(dir);
        StrataIterator it = db.newIterator();
        assertTrue(it.seekToFirst());
        db.close();
        UnavailableException e = assertThrows(UnavailableException.class, it::next);
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        it.close();
    }
}
