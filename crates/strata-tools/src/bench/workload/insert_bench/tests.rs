use super::*;

#[test]
fn rows_have_iibench_s_columns_and_round_trip() {
    let mut rng = Rng::new(9);
    for pk in 1..2000 {
        let row = Row::generate(&mut rng, pk, 1_700_000_000);
        assert!(row.cashregisterid < CASH_REGISTERS);
        assert!(row.productid < PRODUCTS);
        assert!(row.customerid < CUSTOMERS);
        let low = row.customerid as f32 / 100.0;
        assert!(row.price >= low && row.price <= low + 5.0, "{row:?}");
        assert_eq!(row.data.len(), DATA_LENGTH);
        assert_eq!(&row.data[..7], b"aaaaaaa", "{:?}", row.data);
        let back = Row::decode(&row.key(), &row.encode()).unwrap();
        assert_eq!(back, row);
    }
    let e = Row::decode(b"short", b"").unwrap_err();
    assert!(e.contains("not the workload's"), "{e}");
}

#[test]
fn index_keys_sort_as_their_columns_then_the_primary_key() {
    let row = |pk, cash, customer, price: f32, when| Row {
        transactionid: pk,
        dateandtime: when,
        cashregisterid: cash,
        customerid: customer,
        productid: 0,
        price,
        data: vec![],
    };
    // (a, b): a's key sorts before b's in the index.
    let cases = [
        (
            Index::MarketSegment,
            row(9, 0, 5, 1.5, 0),
            row(1, 0, 1, 2.25, 0),
        ),
        (
            Index::MarketSegment,
            row(2, 0, 5, 1.5, 0),
            row(1, 0, 6, 1.5, 0),
        ),
        (
            Index::MarketSegment,
            row(1, 0, 5, 1.5, 0),
            row(2, 0, 5, 1.5, 0),
        ),
        (
            Index::RegisterSegment,
            row(9, 1, 9, 900.0, 0),
            row(1, 2, 0, 0.5, 0),
        ),
        (
            Index::RegisterSegment,
            row(9, 1, 9, 0.5, 0),
            row(1, 1, 0, 0.75, 0),
        ),
        (Index::Pdc, row(9, 0, 9, 1.0, 50), row(1, 0, 0, 1.0, 51)),
        (Index::Pdc, row(9, 0, 9, 1.0, 99), row(1, 0, 0, 1.25, 0)),
    ];
    for (index, a, b) in cases {
        assert!(
            a.index_key(index) < b.index_key(index),
            "{index:?}: {a:?} {b:?}"
        );
        assert!(a.index_key(index).ends_with(&a.key()));
    }
    // Prices sort as numbers, negative ones too.
    let prices = [-3.5f32, -0.25, 0.0, 0.01, 1.0, 1004.99];
    for w in prices.windows(2) {
        assert!(sortable_price(w[0]) < sortable_price(w[1]), "{w:?}");
    }
}

#[test]
fn queries_start_inside_the_indexes_ranges() {
    let mut rng = Rng::new(4);
    for _ in 0..1000 {
        let r = query_start(&mut rng, Index::RegisterSegment);
        let c = u32::from_be_bytes(r.try_into().unwrap());
        assert!((1..=CASH_REGISTERS).contains(&c));
        let p = query_start(&mut rng, Index::Pdc);
        assert!(p.as_slice() >= sortable_price(0.0).as_slice());
        assert!(p.as_slice() <= sortable_price(1005.0).as_slice());
    }
}

#[test]
fn the_verifier_finds_orphans_and_missing_entries() {
    let mut rng = Rng::new(1);
    let rows: Vec<Row> = (1..=20).map(|pk| Row::generate(&mut rng, pk, 5)).collect();
    let feed = |v: &mut IndexVerifier, skip: Option<(Index, usize)>| {
        for row in &rows {
            v.row(&row.key(), &row.encode(), true);
            for index in Index::ALL {
                if skip != Some((index, row.transactionid as usize)) {
                    v.index_entry(index, &row.index_key(index), b"");
                }
            }
        }
    };
    let mut v = IndexVerifier::default();
    feed(&mut v, None);
    assert_eq!(
        v.finish().unwrap(),
        "20 rows; marketsegment 20, registersegment 20, pdc 20 entries"
    );

    let mut v = IndexVerifier::default();
    feed(&mut v, Some((Index::Pdc, 3)));
    let e = v.finish().unwrap_err();
    assert!(
        e.contains("pdc: 0 entries without a row, 1 rows without an entry"),
        "{e}"
    );

    let mut v = IndexVerifier::default();
    feed(&mut v, None);
    let gone = Row::generate(&mut rng, 99, 5);
    v.index_entry(
        Index::MarketSegment,
        &gone.index_key(Index::MarketSegment),
        b"",
    );
    let e = v.finish().unwrap_err();
    assert!(
        e.contains("marketsegment: 1 entries without a row, 0 rows"),
        "{e}"
    );

    // Before the indexes are built, rows expect no entries.
    let mut v = IndexVerifier::default();
    v.row(&rows[0].key(), &rows[0].encode(), false);
    assert!(v.finish().is_ok());
}

#[test]
fn the_pacer_holds_a_writer_to_its_rate() {
    let pacer = Pacer::new(100);
    let start = pacer.started;
    assert_eq!(pacer.wait(0, start), Duration::ZERO);
    assert_eq!(pacer.wait(50, start), Duration::from_millis(500));
    assert_eq!(
        pacer.wait(50, start + Duration::from_millis(400)),
        Duration::from_millis(100)
    );
    assert_eq!(
        pacer.wait(50, start + Duration::from_secs(1)),
        Duration::ZERO
    );
    assert!(pacer.kept(1000, 10.0));
    assert!(pacer.kept(950, 10.0));
    assert!(!pacer.kept(900, 10.0));
}
