package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ColumnFamilyTest {
    @TempDir
    Path dir;

    @Test
    void familiesKeepTheirOwnKeysAcrossReopen() {
        try (Strata db = Strata.open(dir, new Options());
                ColumnFamily users = db.createColumnFamily("users",
                        Options.columnFamily().bloomBitsPerKey(10))) {
            assertEquals("users", users.name());
            db.put(users, b("k"), b("in users"));
            db.put(b("k"), b("in default"));
            try (WriteBatch batch = new WriteBatch()) {
                db.write(batch.put(users, b("k2"), b("batched")));
            }
            assertArrayEquals(b("in users"), db.get(users, b("k")));
            assertEquals(List.of("default", "users"), db.columnFamilyNames());
        }
        assertEquals(List.of("default", "users"), Strata.listColumnFamilies(dir.toString()));
        try (Strata db = Strata.open(dir.toString(), new Options(),
                Map.of("users", Options.columnFamily()));
                ColumnFamily users = db.columnFamily("users")) {
            assertArrayEquals(b("in users"), db.get(users, b("k")));
            assertArrayEquals(b("batched"), db.get(users, b("k2")));
            assertArrayEquals(b("in default"), db.get(b("k")));
            try (StrataIterator it = db.newIterator(users, new ReadOptions())) {
                assertEquals(List.of("k", "k2"), IteratorTest.forward(it));
            }
            assertNull(db.columnFamily("nope"));
        }
    }

    @Test
    void familiesNamedAtOpenAreCreatedWhenAsked() {
        Map<String, Options> families = Map.of("events", Options.columnFamily());
        assertThrows(StrataException.class, () -> Strata.open(dir.toString(), new Options(),
                families));
        try (Strata db = Strata.open(dir.toString(),
                new Options().createMissingColumnFamilies(true), families);
                ColumnFamily events = db.columnFamily("events")) {
            db.put(events, b("e"), b("1"));
            assertArrayEquals(b("1"), db.get(events, b("e")));
        }
    }

    @Test
    void aReadOnlyDatabaseRefusesWrites() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("k"), b("v"));
        }
        try (Strata db = Strata.open(dir, new Options().readOnly(true))) {
            assertArrayEquals(b("v"), db.get(b("k")));
            StrataException e = assertThrows(StrataException.class, () -> db.put(b("k"), b("w")));
            assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        }
    }

    @Test
    void aDroppedFamilyIsGone() {
        try (Strata db = Strata.open(dir, new Options())) {
            ColumnFamily tmp = db.createColumnFamily("tmp", Options.columnFamily());
            db.put(tmp, b("k"), b("v"));
            db.dropColumnFamily(tmp);
            assertEquals(List.of("default"), db.columnFamilyNames());
            StrataException e = assertThrows(StrataException.class,
                    () -> db.get(tmp, b("k")));
            assertTrue(e.getMessage().contains("tmp"), e.getMessage());
            tmp.close();
        }
    }

    @Test
    void aClosedHandleThrowsAndDatabaseOptionsAreRefusedForAFamily() {
        try (Strata db = Strata.open(dir, new Options())) {
            ColumnFamily cf = db.createColumnFamily("cf", Options.columnFamily());
            cf.close();
            UnavailableException e = assertThrows(UnavailableException.class,
                    () -> db.put(cf, b("k"), b("v")));
            assertEquals("unavailable: the column family handle is closed", e.getMessage());
            InvalidArgumentException wrong = assertThrows(InvalidArgumentException.class,
                    () -> db.createColumnFamily("other", Options.columnFamily()
                            .blockCacheSize(1)));
            assertEquals("invalid argument: option 'block_cache_size' is not a column family "
                    + "option", wrong.getMessage());
        }
    }
}
