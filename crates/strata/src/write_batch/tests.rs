use super::*;

fn encoded(batch: &WriteBatch, seq: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode_header(&mut out, seq, batch.len() as u32);
    out.extend_from_slice(batch.records());
    out
}

#[test]
fn log_data_travels_with_the_batch_but_is_not_an_update() {
    let mut b = WriteBatch::new();
    b.put_log_data(b"first").put(b"a", b"1");
    b.put_log_data(b"").delete(b"b").put_log_data(b"last");
    assert_eq!(b.len(), 2);
    let bytes = encoded(&b, 7);
    let d = DecodedBatch::parse(&bytes).unwrap();
    let updates: Vec<_> = d.iter().map(|e| e.unwrap().key).collect();
    assert_eq!(updates, [&b"a"[..], &b"b"[..]]);
    let blobs: Vec<&[u8]> = d.log_data().collect();
    assert_eq!(blobs, [&b"first"[..], &b""[..], &b"last"[..]]);
    assert_eq!(b.log_data().count(), 3);
    let mut only = WriteBatch::new();
    only.put_log_data(b"x");
    assert!(only.is_empty() && only.has_log_data());
    assert_eq!(
        DecodedBatch::parse(&encoded(&only, 1))
            .unwrap()
            .iter()
            .count(),
        0
    );
}

#[test]
fn batch_round_trips_through_its_encoding() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1")
        .delete(b"b")
        .single_delete(b"")
        .put(b"", b"")
        .merge(b"m", b"operand");
    let bytes = encoded(&b, 42);
    let d = DecodedBatch::parse(&bytes).unwrap();
    assert_eq!((d.seq, d.count), (42, 5));
    let got: Vec<_> = d.iter().map(|e| e.unwrap()).collect();
    assert_eq!(got, b.iter().map(|e| e.unwrap()).collect::<Vec<_>>());
    assert_eq!(got[0].value, b"1");
    assert_eq!(got[1].kind, ValueKind::Delete);
    assert_eq!(got[2].kind, ValueKind::SingleDelete);
    assert_eq!(
        (got[4].kind, got[4].value),
        (ValueKind::Merge, &b"operand"[..])
    );
    assert_eq!(b.merges().collect::<Vec<_>>(), [(0, &b"m"[..])]);
    assert_eq!(b.encoded_len(), HEADER_LEN + b.payload_len());
    assert!(!b.has_families());
}

#[test]
fn records_name_their_column_family() {
    let index = ColumnFamily::new(300, "index");
    let mut b = WriteBatch::new();
    b.put(b"a", b"1")
        .put_cf(&index, b"b", b"2")
        .delete_cf(&index, b"c")
        .single_delete_cf(&index, b"d");
    assert!(b.has_families());
    let bytes = encoded(&b, 1);
    let got: Vec<(u32, ValueKind, Vec<u8>)> = DecodedBatch::parse(&bytes)
        .unwrap()
        .iter()
        .map(|e| e.map(|e| (e.cf, e.kind, e.key.to_vec())).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            (0, ValueKind::Put, b"a".to_vec()),
            (300, ValueKind::Put, b"b".to_vec()),
            (300, ValueKind::Delete, b"c".to_vec()),
            (300, ValueKind::SingleDelete, b"d".to_vec()),
        ]
    );
    // A family id cut short is an error.
    let mut cut = Vec::new();
    encode_header(&mut cut, 1, 1);
    cut.extend_from_slice(&[ValueKind::Put as u8 | FAMILY_BIT, 0x80]);
    assert!(DecodedBatch::parse(&cut)
        .unwrap()
        .iter()
        .any(|e| e.is_err()));
}

/// The families a batch names, which the write path checks instead of decoding the
/// batch: each once, kept exact through save points and rebuilt by `from_records`.
#[test]
fn a_batch_knows_the_families_it_names() {
    let (a, b) = (ColumnFamily::new(3, "a"), ColumnFamily::new(9, "b"));
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v");
    assert_eq!(batch.families(), [] as [u32; 0]);
    batch
        .put_cf(&a, b"k", b"v")
        .delete_cf(&a, b"k")
        .put_cf(&b, b"k", b"v");
    let mark = batch.mark();
    batch
        .merge_cf(&a, b"k", b"1")
        .delete_range_cf(&b, b"a", b"z");
    assert_eq!(batch.families(), [3, 9]);
    batch.truncate_to(&mark);
    assert_eq!(batch.families(), [3, 9]);

    let mut later = WriteBatch::new();
    later.put(b"k", b"v");
    let mark = later.mark();
    later.put_cf(&b, b"k", b"v");
    assert_eq!(later.families(), [9]);
    later.truncate_to(&mark);
    assert_eq!(later.families(), [] as [u32; 0]);
    assert!(!later.has_families());

    let rebuilt = WriteBatch::from_records(batch.records(), batch.len() as u32).unwrap();
    assert_eq!(rebuilt.families(), [3, 9]);
    batch.clear();
    assert_eq!(batch.families(), [] as [u32; 0]);
}

#[test]
fn every_truncation_and_miscount_is_an_error_not_a_panic() {
    let mut b = WriteBatch::new();
    b.put(b"key", b"value").delete(b"other").merge(b"m", b"1");
    let bytes = encoded(&b, 7);
    for cut in 0..bytes.len() {
        let ok = DecodedBatch::parse(&bytes[..cut])
            .map(|d| d.iter().all(|e| e.is_ok()))
            .unwrap_or(false);
        assert!(!ok, "truncated batch at {cut} decoded cleanly");
    }
    let mut more = bytes.clone();
    more[8] = 4; // count says 4, only 3 present
    assert!(DecodedBatch::parse(&more)
        .unwrap()
        .iter()
        .any(|e| e.is_err()));
    let mut fewer = bytes;
    fewer[8] = 2; // trailing bytes after the counted records
    assert!(DecodedBatch::parse(&fewer)
        .unwrap()
        .iter()
        .any(|e| e.is_err()));
}

#[test]
fn a_range_deletion_is_one_record_framed_like_a_put() {
    let index = ColumnFamily::new(3, "index");
    let mut b = WriteBatch::new();
    b.delete_range(b"a", b"z")
        .delete_range(b"m", b"m")
        .delete_range_cf(&index, b"b", b"c");
    assert_eq!(b.len(), 2, "the empty range adds nothing");
    let bytes = encoded(&b, 9);
    let got: Vec<_> = DecodedBatch::parse(&bytes)
        .unwrap()
        .iter()
        .map(|e| e.unwrap())
        .map(|e| (e.cf, e.kind, e.key.to_vec(), e.value.to_vec()))
        .collect();
    let rd = ValueKind::RangeDeletion;
    assert_eq!(
        got,
        [
            (0, rd, b"a".to_vec(), b"z".to_vec()),
            (3, rd, b"b".to_vec(), b"c".to_vec())
        ]
    );
    assert_eq!(rd as u8, crate::range_del::RANGE_DELETION_KIND);
}

/// Whether `begin` is after `end` depends on the family's key order, so the batch keeps
/// the record and `Db::write` judges it; an empty range adds nothing.
#[test]
fn a_range_with_begin_after_end_is_left_to_the_family_order() {
    let mut b = WriteBatch::new();
    b.put(b"k", b"v");
    assert_eq!(b.range_deletions().count(), 0);
    b.delete_range(b"z", b"a").delete_range(b"q", b"q");
    assert!(b.invalid_reason().is_none());
    let ranges: Vec<_> = b
        .range_deletions()
        .map(|(cf, begin, end)| (cf, begin.to_vec(), end.to_vec()))
        .collect();
    assert_eq!(ranges, [(0, b"z".to_vec(), b"a".to_vec())]);
}

#[test]
fn oversized_updates_mark_the_batch_invalid() {
    let mut b = WriteBatch::new();
    b.put(vec![0; MAX_KEY_LEN + 1], b"v");
    assert!(b.invalid_reason().unwrap().contains("key of"));
    assert!(b.is_empty());
    b.clear();
    assert!(b.invalid_reason().is_none());
}
