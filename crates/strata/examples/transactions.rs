// Transactions: an optimistic one that loses to a concurrent write, a pessimistic transfer
// under key locks, and a two-phase commit. Run with:
// cargo run -p strata --example transactions
use strata::TransactionBase;
use strata::{Db, ErrorKind, Options, TransactionDb, TransactionOptions, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join("strata-transactions");
    let _ = std::fs::remove_dir_all(&path); // start afresh
    let mut options = Options::default();
    options.create_if_missing = true;

    // Optimistic: no locks; the commit fails if someone else wrote what it read for update.
    let db = Db::open(&path, options.clone())?;
    db.put(b"stock", b"10")?;
    let mut txn = db.optimistic_transaction(&WriteOptions::default());
    let stock = txn.get_for_update(b"stock")?.unwrap_or_default();
    db.put(b"stock", b"9")?; // another writer gets there first
    txn.put(b"stock", &stock)?;
    match txn.commit() {
        Err(e) if e.kind() == ErrorKind::Busy => println!("optimistic: conflict, retry"),
        other => other?,
    }
    db.close()?;

    // Pessimistic: keys are locked as the transaction goes; commits never conflict.
    let tdb = TransactionDb::open(&path, options.clone())?;
    let wo = WriteOptions::default();
    {
        let mut txn = tdb.transaction(&wo, &TransactionOptions::default());
        txn.put(b"alice", b"90")?;
        txn.put(b"bob", b"110")?;
        txn.commit()?;
    }

    // Two-phase commit: prepare makes the writes durable without applying them.
    {
        let mut txn = tdb.transaction(&wo, &TransactionOptions::default());
        txn.put(b"carol", b"5")?;
        txn.set_name("xid-1")?;
        txn.prepare()?;
    } // dropped as if the process stopped here: the transaction stays prepared
    drop(tdb);

    let tdb = TransactionDb::open(&path, options)?;
    for mut prepared in tdb.prepared_transactions() {
        println!(
            "recovered prepared transaction {}",
            String::from_utf8_lossy(prepared.name().unwrap_or_default())
        );
        prepared.commit()?;
    }
    let carol = tdb.db().get(b"carol")?.unwrap_or_default();
    println!("carol = {}", String::from_utf8_lossy(&carol));
    drop(tdb);
    std::fs::remove_dir_all(&path)?;
    Ok(())
}
