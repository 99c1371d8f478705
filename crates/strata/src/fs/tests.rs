use super::*;

#[test]
fn posix_files_append_read_and_lock() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFs;
    let p = dir.path().join("f");
    let stats = Arc::new(IoStats::default());
    let mut w = CountedFile::new(fs.create_writable(&p).unwrap(), stats.clone(), IoClass::Wal);
    w.append(b"hello ").unwrap();
    w.append(b"world").unwrap();
    w.sync().unwrap();
    assert_eq!(w.len(), 11);
    assert_eq!(stats.snapshot().written(IoClass::Wal), 11);
    assert_eq!(stats.snapshot().syncs(IoClass::Wal), 1);
    let mut r = fs.open_sequential(&p).unwrap();
    let mut buf = [0u8; 64];
    let n = r.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello world");
    fs.truncate(&p, 5).unwrap();
    assert_eq!(fs.file_size(&p).unwrap(), 5);

    let lock_path = dir.path().join("LOCK");
    let held = fs.lock(&lock_path).unwrap();
    let err = fs.lock(&lock_path).err().unwrap();
    assert_eq!(err.kind(), crate::ErrorKind::Busy);
    drop(held);
    fs.lock(&lock_path).unwrap();
}

#[test]
fn vectors_read_at_an_offset_match_reads_into_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let file = PosixFs.open_random(&path).unwrap();
    for (offset, len) in [
        (0, 0),
        (0, 1),
        (5, 4096),
        (99_000, 1000),
        (0, 100_000),
        (1, 65_536),
    ] {
        let got = file.read_vec_at(offset, len).unwrap();
        assert_eq!(
            got,
            &data[offset as usize..offset as usize + len],
            "{offset} {len}"
        );
        let mut buf = vec![0; len];
        file.read_exact_at(offset, &mut buf).unwrap();
        assert_eq!(got, buf);
    }
    let err = file.read_vec_at(99_999, 2).unwrap_err();
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn io_errors_name_the_path() {
    let err = PosixFs
        .open_sequential(Path::new("/nonexistent/strata/file"))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("/nonexistent/strata/file"),
        "{err}"
    );
}

#[test]
fn a_file_replaced_atomically_reads_back_whole_or_up_to_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    write_file_atomically(&PosixFs, dir.path(), "state", b"version 1").unwrap();
    write_file_atomically(&PosixFs, dir.path(), "state", b"version 2").unwrap();
    let path = dir.path().join("state");
    assert_eq!(
        read_small_file(&PosixFs, &path, 1024).unwrap(),
        b"version 2"
    );
    assert_eq!(read_small_file(&PosixFs, &path, 7).unwrap(), b"version");
    assert!(!dir.path().join("state.tmp").exists());
}
