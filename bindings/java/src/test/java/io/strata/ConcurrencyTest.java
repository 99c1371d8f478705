package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Threads, close and the garbage collector against native handles: nothing may crash. */
class ConcurrencyTest {
    @TempDir
    Path dir;

    @Test
    void closingWhileOtherThreadsReadAndWriteOnlyMakesThemThrow() throws Exception {
        Strata db = Strata.open(dir, new Options());
        AtomicInteger unavailable = new AtomicInteger();
        AtomicReference<Throwable> unexpected = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int id = t;
            threads.add(new Thread(() -> {
                try (StrataIterator it = db.newIterator()) {
                    for (int i = 0; ; i++) {
                        byte[] key = b("t" + id + "-" + (i % 100));
                        db.put(key, key);
                        db.get(key);
                        it.seekToFirst();
                    }
                } catch (UnavailableException e) {
                    unavailable.incrementAndGet();
                } catch (Throwable e) {
                    unexpected.set(e);
                }
            }));
        }
        threads.forEach(Thread::start);
        Thread.sleep(200);
        db.close();
        for (Thread t : threads) {
            t.join(10_000);
        }
        if (unexpected.get() != null) {
            throw new AssertionError("a thread failed otherwise", unexpected.get());
        }
        assertEquals(4, unavailable.get(), "every thread stopped on UnavailableException");
    }

    @Test
    void handlesLeftOpenAreFreedByTheGarbageCollector() throws Exception {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("k"), b("v"));
            for (int i = 0; i < 20_000; i++) {
                // Neither closed nor kept: the Cleaner frees their native shells.
                db.getSnapshot();
                new WriteBatch().put(b("k"), b("v"));
                if (i % 5_000 == 0) {
                    System.gc();
                }
            }
            // The Cleaner runs on its own thread after a collection: give it a few seconds.
            long live = Long.MAX_VALUE;
            for (int tries = 0; tries < 50 && live >= 20_000; tries++) {
                System.gc();
                Thread.sleep(100);
                live = db.getLongProperty("strata.num-snapshots");
            }
            assertTrue(live < 20_000, "snapshots left to the garbage collector are released");
        }
    }
}
