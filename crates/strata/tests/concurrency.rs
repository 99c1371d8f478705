//! Many writer threads and reader/iterator threads on one database: snapshot reads stay
//! stable while writes go on, and every thread's writes appear in order.

use std::sync::atomic::{AtomicBool, Ordering};

use strata::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

const WRITERS: usize = 8;
const READERS: usize = 4;
const WRITES_PER_THREAD: usize = 3000;

fn key(t: usize, i: usize) -> Vec<u8> {
    format!("w{t}-{i:06}").into_bytes()
}

#[test]
fn eight_writers_four_readers_with_stable_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 256 << 10;
    let db = Db::open(dir.path(), options).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let mut opts = WriteOptions::default();
                    opts.sync = t % 4 == 0;
                    for i in 0..WRITES_PER_THREAD {
                        let mut b = WriteBatch::new();
                        b.put(key(t, i), format!("{i}").as_bytes());
                        // Each batch also moves this writer's counter: a reader must never
                        // see the counter ahead of the key written with it.
                        b.put(format!("counter{t}").as_bytes(), format!("{i}").as_bytes());
                        db.write(b, &opts).unwrap();
                    }
                })
            })
            .collect();
        for r in 0..READERS {
            let (db, done) = (&db, &done);
            s.spawn(move || {
                let mut rounds = 0;
                while !done.load(Ordering::Relaxed) || rounds < 3 {
                    rounds += 1;
                    let snap = db.snapshot();
                    let t = (r + rounds) % WRITERS;
                    let counter = db
                        .get_at(&snap, format!("counter{t}").as_bytes())
                        .unwrap()
                        .map(|v| String::from_utf8(v).unwrap().parse::<usize>().unwrap());
                    // Iterate the writer's keys at the snapshot: exactly 0..=counter.
                    let read = || -> Vec<Vec<u8>> {
                        let mut writer_keys = ReadOptions::default();
                        writer_keys.snapshot = Some(snap.clone());
                        writer_keys.lower_bound = Some(format!("w{t}-").into_bytes());
                        writer_keys.upper_bound = Some(format!("w{t}.").into_bytes());
                        let mut it = db.iter(&writer_keys);
                        let mut keys = Vec::new();
                        it.seek_to_first();
                        while it.valid() {
                            keys.push(it.key().to_vec());
                            it.next();
                        }
                        it.status().unwrap();
                        keys
                    };
                    let first = read();
                    let expected = counter.map_or(0, |c| c + 1);
                    assert_eq!(first.len(), expected, "reader {r}: writer {t}");
                    for (i, k) in first.iter().enumerate() {
                        assert_eq!(k, &key(t, i));
                    }
                    // The same snapshot read again, after more writes, is identical.
                    assert_eq!(read(), first, "reader {r}: snapshot moved");
                    if let Some(c) = counter {
                        assert_eq!(
                            db.get_at(&snap, key(t, c)).unwrap().unwrap(),
                            c.to_string().into_bytes()
                        );
                    }
                }
            });
        }
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
    let stats = db.stats();
    assert_eq!(stats.batches, (WRITERS * WRITES_PER_THREAD) as u64);
    // Group commit joined concurrent batches into fewer WAL writes.
    assert!(stats.write_groups < stats.batches, "{stats:?}");
    for t in 0..WRITERS {
        let last = WRITES_PER_THREAD - 1;
        assert_eq!(
            db.get(key(t, last)).unwrap().unwrap(),
            last.to_string().into_bytes()
        );
    }
    db.close().unwrap();
}
