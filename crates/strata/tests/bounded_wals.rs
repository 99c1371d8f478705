//! `max_total_wal_size`: a family written once beside a busy one must not keep every WAL
//! alive. With the bound, the families holding the oldest live WAL are flushed and it is
//! deleted; the bound can be set on the open database.

use std::path::Path;

use strata::{CfOptions, Db, Options};

/// (WAL files, their bytes) in `dir`.
fn live_wals(dir: &Path) -> (usize, u64) {
    let mut count = 0;
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).expect("list") {
        let entry = entry.expect("entry");
        if entry.file_name().to_string_lossy().ends_with(".log") {
            // A background flush may delete a WAL between the listing and this look: it
            // was not live any more.
            match entry.metadata() {
                Ok(metadata) => {
                    count += 1;
                    bytes += metadata.len();
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => panic!("metadata: {e}"),
            }
        }
    }
    (count, bytes)
}

const WRITE_BUFFER: usize = 64 << 10;

/// Opens a database with a cold family (one small write) and a hot one; returns the most
/// WALs and WAL bytes seen while `rounds` of 100 1-KB writes go to the hot family, measured
/// after each round.
fn run(
    dir: &Path,
    max_total_wal_size: u64,
    rounds: usize,
    db_out: Option<&mut Option<Db>>,
) -> (usize, u64) {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.max_total_wal_size = max_total_wal_size;
    let db = Db::open(dir, options).expect("open");
    let cold = db.create_cf("cold", CfOptions::default()).expect("cold");
    let mut hot_options = CfOptions::default();
    hot_options.write_buffer_size = WRITE_BUFFER;
    let hot = db.create_cf("hot", hot_options).expect("hot");
    db.put_cf(&cold, b"config", b"1").expect("cold write");
    let (most, most_bytes) = write_rounds(&db, &hot, 0, rounds);
    if let Some(out) = db_out {
        *out = Some(db);
    } else {
        db.close().expect("close");
    }
    (most, most_bytes)
}

fn write_rounds(db: &Db, hot: &strata::ColumnFamily, from: usize, rounds: usize) -> (usize, u64) {
    let value = vec![b'h'; 1000];
    let (mut most, mut most_bytes) = (0, 0);
    for round in from..from + rounds {
        for i in 0..100u32 {
            let key = format!("{round:05}-{i:03}");
            db.put_cf(hot, key, &value).expect("hot write");
        }
        let (count, bytes) = live_wals(db.path());
        most = most.max(count);
        most_bytes = most_bytes.max(bytes);
    }
    (most, most_bytes)
}

#[test]
fn a_cold_family_does_not_keep_every_wal_alive_with_the_bound() {
    let limit = 256 << 10;
    let bounded = tempfile::tempdir().expect("tempdir");
    let (most, most_bytes) = run(bounded.path(), limit, 40, None);
    // About 4 MB goes through WALs of about 64 KiB. Past the bound the cold family is
    // flushed and the old WALs go once the flushes that hold them are done (the flush
    // thread may lag a few memtables behind).
    assert!(
        most <= 12,
        "{most} WALs live at once with a bound of {limit} bytes"
    );
    assert!(
        most_bytes <= limit + 8 * WRITE_BUFFER as u64,
        "{most_bytes} WAL bytes live at once with a bound of {limit}"
    );
    // Without a bound in reach (0: four times the memtable memory, the cold family's 64
    // MiB memtables included) every WAL since the cold write stays.
    let unbounded = tempfile::tempdir().expect("tempdir");
    let (most, _) = run(unbounded.path(), 0, 40, None);
    assert!(
        most > 40,
        "only {most} WALs without a bound: the test shows nothing"
    );
}

#[test]
fn the_bound_set_on_an_open_database_frees_the_old_wals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut db = None;
    let (before, _) = run(dir.path(), 0, 20, Some(&mut db));
    let db = db.expect("db");
    assert!(before > 20, "{before} WALs");
    db.set_db_options(&[("max_total_wal_size", "262144")])
        .expect("set");
    let hot = db.cf("hot").expect("hot");
    write_rounds(&db, &hot, 20, 5);
    db.wait_for_compactions().expect("wait");
    let (after, _) = live_wals(dir.path());
    assert!(
        after <= 12,
        "{after} WALs after the bound was set (from {before})"
    );
    // The cold family's write is in a table now, and survives a reopen with its WALs gone.
    db.close().expect("close");
    let options = Options::default();
    let families = [
        ("cold", CfOptions::default()),
        ("hot", CfOptions::default()),
    ];
    let db = Db::open_cf(dir.path(), options, families).expect("reopen");
    let cold = db.cf("cold").expect("cold");
    assert_eq!(
        db.get_cf(&cold, b"config").expect("get").as_deref(),
        Some(&b"1"[..])
    );
    db.close().expect("close");
}
