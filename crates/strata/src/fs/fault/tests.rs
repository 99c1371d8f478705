use super::*;

fn write(fs: &FaultFs, path: &Path, data: &[u8], sync: bool) {
    let mut f = fs.create_writable(path).unwrap();
    f.append(data).unwrap();
    if sync {
        f.sync().unwrap();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// A setup of every case, then the names and contents a cut leaves, by each way of cutting.
fn scenario(root: &Path) -> FaultFs {
    let fs = FaultFs::new();
    let dir = root.join("d");
    fs.create_dir_all(&dir).unwrap();
    fs.sync_dir(root).unwrap();
    write(&fs, &dir.join("old"), b"old bytes", true);
    write(&fs, &dir.join("doomed"), b"doomed", true);
    write(&fs, &dir.join("target"), b"replaced", true);
    write(&fs, &dir.join("moved"), b"moved", true);
    fs.sync_dir(&dir).unwrap();
    // Changes after the last directory sync: none of them durable.
    write(&fs, &dir.join("new"), b"new, synced", true);
    fs.remove_file(&dir.join("doomed")).unwrap();
    fs.rename(&dir.join("moved"), &dir.join("target")).unwrap();
    fs.create_dir_all(&dir.join("sub/deeper")).unwrap();
    write(&fs, &dir.join("sub/deeper/f"), b"x", true);
    fs.sync_dir(&dir.join("sub/deeper")).unwrap();
    // A synced file with an unsynced tail.
    let mut f = fs.create_writable(&root.join("tail")).unwrap();
    f.append(b"synced|").unwrap();
    f.sync().unwrap();
    f.append(b"unsynced").unwrap();
    fs.sync_dir(root).unwrap();
    fs
}

fn check_cut(root: &Path) {
    let dir = root.join("d");
    assert_eq!(names(&dir), ["doomed", "moved", "old", "target"]);
    assert_eq!(std::fs::read(dir.join("doomed")).unwrap(), b"doomed");
    assert_eq!(std::fs::read(dir.join("moved")).unwrap(), b"moved");
    assert_eq!(std::fs::read(dir.join("target")).unwrap(), b"replaced");
    assert_eq!(std::fs::read(root.join("tail")).unwrap(), b"synced|");
}

/// Renames, removals, new files and new directories are undone by a cut until their
/// directory is synced; unsynced tails are cut.
#[test]
fn names_are_durable_only_after_a_directory_sync() {
    let root = tempfile::tempdir().unwrap();
    let fs = scenario(root.path());
    fs.power_loss().unwrap();
    check_cut(root.path());

    // The same state written as an image while the files stay as they are.
    let root = tempfile::tempdir().unwrap();
    let fs = scenario(root.path());
    fs.freeze();
    let out = tempfile::tempdir().unwrap();
    let image = out.path().join("image");
    let report = fs
        .write_durable_image(root.path(), &image, &PowerCut::clean())
        .unwrap();
    check_cut(&image);
    assert_eq!(
        names(&root.path().join("d")),
        ["new", "old", "sub", "target"]
    );
    assert_eq!(report.tails_cut, 1);
    assert_eq!(report.names_restored, 3, "{report:?}");
    assert_eq!(report.names_dropped, 2, "{report:?}");
}

/// After the directory syncs, the same changes survive.
#[test]
fn synced_directories_keep_their_changes() {
    let root = tempfile::tempdir().unwrap();
    let fs = scenario(root.path());
    let dir = root.path().join("d");
    fs.sync_dir(&dir).unwrap();
    fs.sync_dir(&dir.join("sub")).unwrap();
    fs.power_loss().unwrap();
    assert_eq!(names(&dir), ["new", "old", "sub", "target"]);
    assert_eq!(std::fs::read(dir.join("target")).unwrap(), b"moved");
    assert_eq!(std::fs::read(dir.join("sub/deeper/f")).unwrap(), b"x");
}

/// Some unsynced tails are left as garbage (never longer than what was appended), some
/// partly kept; the synced prefix is always there.
#[test]
fn unsynced_tails_are_cut_torn_or_left_as_garbage() {
    let (mut garbage, mut cut) = (0, 0);
    for seed in 0..40 {
        let root = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let mut f = fs.create_writable(&root.path().join("f")).unwrap();
        f.append(b"synced").unwrap();
        f.sync().unwrap();
        f.append(&[7u8; 100]).unwrap();
        fs.sync_dir(root.path()).unwrap();
        let r = fs
            .power_loss_with(&PowerCut {
                garbage_one_in: 2,
                partial_one_in: 2,
                seed,
            })
            .unwrap();
        let got = std::fs::read(root.path().join("f")).unwrap();
        assert!(got.starts_with(b"synced") && got.len() <= 106, "{got:?}");
        garbage += r.garbage_tails;
        cut += r.tails_cut;
    }
    assert!(garbage > 5 && cut > 5, "{garbage} {cut}");
}

/// Reads fail only in the threads that asked; write, sync and metadata faults hit only the
/// fault-prone files; every fault is counted and changes nothing.
#[test]
fn transient_faults_are_counted_and_leave_files_alone() {
    let root = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    fs.set_fault_rates(FaultRates {
        read_fault_one_in: 2,
        write_fault_one_in: 2,
        metadata_write_fault_one_in: 2,
        write_fault_files: vec![".sst".into()],
        seed: 9,
    });
    let plain = root.path().join("MANIFEST");
    for _ in 0..20 {
        write(&fs, &plain, b"never fails", true);
    }
    let reader = fs.open_random(&plain).unwrap();
    for _ in 0..50 {
        assert_eq!(reader.read_vec_at(0, 5).unwrap(), b"never");
    }
    FaultFs::read_faults_here(true);
    let failed = (0..50)
        .filter(|_| reader.read_vec_at(0, 5).is_err())
        .count();
    FaultFs::read_faults_here(false);
    assert!(failed > 5, "{failed}");
    let (mut ok, mut failed_writes) = (0, 0);
    for i in 0..50 {
        let path = root.path().join(format!("{i}.sst"));
        let done = fs.create_writable(&path).and_then(|mut f| {
            f.append(b"table")?;
            f.sync()
        });
        match done {
            Ok(()) => ok += 1,
            Err(_) => failed_writes += 1,
        }
    }
    assert!(ok > 0 && failed_writes > 0);
    let c = fs.fault_counts();
    assert_eq!(c.read_errors, failed as u64);
    assert_eq!(
        c.write_errors + c.sync_errors + c.enospc + c.metadata_errors,
        failed_writes
    );
    assert!(c.write_errors > 0 && c.sync_errors > 0 && c.enospc > 0 && c.metadata_errors > 0);
}
