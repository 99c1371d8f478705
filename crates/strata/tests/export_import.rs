//! Moving a column family: `export_column_family` then `create_column_family_with_import`
//! gives a family reading as the source did (checked against a model), in the same database
//! or another; a missing, corrupt or mismatched export is refused and changes nothing.

use std::collections::BTreeMap;

use strata::{CfOptions, Db, ErrorKind, Options, ReverseBytewiseComparator};

/// A small deterministic generator (xorshift64*), so that a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn small() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 16 << 10;
    options.target_file_size_base = 8 << 10;
    options.max_bytes_for_level_base = 16 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options
}

fn read_cf(db: &Db, cf: &strata::ColumnFamily) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut it = db.iter_cf(cf, &strata::ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut all = BTreeMap::new();
    while it.valid() {
        all.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    all
}

#[test]
fn an_exported_family_imports_into_another_database_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let source = Db::open(dir.path().join("source"), small()).unwrap();
    let users = source.create_cf("users", small().cf_options()).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Rng(5);
    for i in 0..5000 {
        let k = format!("user{:04}", rng.below(1500)).into_bytes();
        if rng.below(8) == 0 {
            source.delete_cf(&users, &k).unwrap();
            model.remove(&k);
        } else {
            let v = format!("v{i}").into_bytes();
            source.put_cf(&users, &k, &v).unwrap();
            model.insert(k, v);
        }
    }
    source.wait_for_compactions().unwrap();
    let export = dir.path().join("export");
    let metadata = source.export_column_family(&users, &export).unwrap();
    assert!(!metadata.files.is_empty());
    assert!(metadata.files.iter().any(|f| f.level > 0), "{metadata:?}");
    assert_eq!(read_cf(&source, &users), model, "the source is unchanged");
    let err = source.export_column_family(&users, &export).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");

    // Another database, with few writes: the imported sequence numbers are above its own.
    let target = Db::open(dir.path().join("target"), small()).unwrap();
    target.put(b"own", b"key").unwrap();
    let imported = target
        .create_column_family_with_import(small().cf_options(), "moved", &metadata)
        .unwrap();
    assert_eq!(read_cf(&target, &imported), model);
    // Later writes are newer than the imported keys.
    target.put_cf(&imported, b"user0001", b"newer").unwrap();
    target.delete_cf(&imported, b"user0002").unwrap();
    model.insert(b"user0001".to_vec(), b"newer".to_vec());
    model.remove(&b"user0002"[..]);
    assert_eq!(read_cf(&target, &imported), model);
    target.flush().unwrap();
    target.compact_all().unwrap();
    assert_eq!(read_cf(&target, &imported), model);
    // And after a reopen.
    drop(target);
    let mut reopen = small();
    reopen.create_missing_column_families = true;
    let target = Db::open_cf(
        dir.path().join("target"),
        reopen,
        [("moved", small().cf_options())],
    )
    .unwrap();
    let moved = target.cf("moved").unwrap();
    assert_eq!(read_cf(&target, &moved), model);
    assert_eq!(target.get(b"own").unwrap().as_deref(), Some(&b"key"[..]));
}

#[test]
fn a_missing_corrupt_or_mismatched_export_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), small()).unwrap();
    let cf = db.default_cf();
    for i in 0..3000 {
        db.put(format!("k{i:05}"), format!("value-{i}")).unwrap();
    }
    db.flush().unwrap();
    let export = dir.path().join("export");
    let metadata = db.export_column_family(&cf, &export).unwrap();
    let files_before: Vec<String> = std::fs::read_dir(dir.path().join("db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();

    let mut reverse = CfOptions::default();
    reverse.comparator = std::sync::Arc::new(ReverseBytewiseComparator);
    let err = db
        .create_column_family_with_import(reverse, "a", &metadata)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("comparator"), "{err}");

    let mut lying = metadata.clone();
    lying.files[0].num_entries += 1;
    let err = db
        .create_column_family_with_import(CfOptions::default(), "b", &lying)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("not the table the metadata describes"),
        "{err}"
    );

    let first = export.join(&metadata.files[0].name);
    let mut bytes = std::fs::read(&first).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&first, &bytes).unwrap();
    let err = db
        .create_column_family_with_import(CfOptions::default(), "c", &metadata)
        .unwrap_err();
    assert!(
        err.to_string().contains(&first.display().to_string()),
        "{err}"
    );

    std::fs::remove_file(&first).unwrap();
    let err = db
        .create_column_family_with_import(CfOptions::default(), "d", &metadata)
        .unwrap_err();
    assert!(
        err.to_string().contains("cannot be brought in")
            && err.to_string().contains(&first.display().to_string()),
        "{err}"
    );
    // Nothing changed: no family, no file left behind.
    assert_eq!(db.cf_names(), vec!["default".to_string()]);
    let mut files_after: Vec<String> = std::fs::read_dir(dir.path().join("db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut before = files_before.clone();
    before.sort();
    files_after.sort();
    assert_eq!(files_after, before);
}
