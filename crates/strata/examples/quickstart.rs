// Open a database, write to it, and read it: as it is now, and through a snapshot taken
// before the last write. Run with: cargo run -p strata --example quickstart
use strata::{Db, Options, WriteBatch, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join("strata-quickstart");
    let _ = std::fs::remove_dir_all(&path); // start afresh
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options)?;
    db.put(b"apple", b"red")?;

    let snapshot = db.snapshot(); // a stable view: later writes do not change it

    let mut batch = WriteBatch::new(); // applied atomically
    batch.put(b"banana", b"yellow").delete(b"apple");
    let mut durable = WriteOptions::default();
    durable.sync = true; // on disk when write() returns
    db.write(batch, &durable)?;

    // A range of keys as of now (db.iter(ReadOptions) gives a cursor instead).
    for entry in db.range(&b"a"[..]..&b"z"[..]) {
        let (key, value) = entry?;
        println!("now:         {} = {}", show(&key), show(&value));
    }
    // Point reads through the snapshot: apple is still there, banana not yet.
    for key in [&b"apple"[..], b"banana"] {
        let value = db.get_at(&snapshot, key)?;
        let value = value.as_deref().map_or("(none)".to_string(), show);
        println!("at snapshot: {} = {value}", show(key));
    }

    drop(snapshot); // lets compactions drop the versions it kept
    db.close()?;
    std::fs::remove_dir_all(&path)?;
    Ok(())
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
