import static java.nio.charset.StandardCharsets.UTF_8;

import io.strata.Options;
import io.strata.ReadOptions;
import io.strata.Strata;
import io.strata.StrataIterator;
import io.strata.Transaction;
import io.strata.WriteBatch;

/** The quick start of bindings/java/README.md: run with `java -cp JAR QuickStart.java DIR`. */
public class QuickStart {
    public static void main(String[] args) {
        String path = args.length > 0 ? args[0] : "/tmp/strata-quickstart";
        try (Strata db = Strata.open(path, new Options())) {
            db.put("apple".getBytes(UTF_8), "red".getBytes(UTF_8));
            try (WriteBatch batch = new WriteBatch()) {
                batch.put("banana".getBytes(UTF_8), "yellow".getBytes(UTF_8));
                batch.put("cherry".getBytes(UTF_8), "dark red".getBytes(UTF_8));
                db.write(batch);
            }
            System.out.println("apple = " + new String(db.get("apple".getBytes(UTF_8)), UTF_8));

            try (Transaction txn = db.beginTransaction()) {
                txn.put("apple".getBytes(UTF_8), "green".getBytes(UTF_8));
                txn.commit();
            }

            ReadOptions fromB = new ReadOptions().lowerBound("b".getBytes(UTF_8));
            try (StrataIterator it = db.newIterator(fromB)) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    System.out.println(new String(it.key(), UTF_8) + " = "
                            + new String(it.value(), UTF_8));
                }
            }
        }
    }
}
