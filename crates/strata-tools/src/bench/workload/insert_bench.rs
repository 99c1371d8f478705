//! The insert benchmark (Mark Callaghan's iibench, as MyRocks lays its table out): a table
//! `purchases_index` with an auto-increment primary key and three secondary indexes, each a
//! column family.
//!
//! | family | key | value |
//! | --- | --- | --- |
//! | `insertbench_pk` | transactionid (8) | dateandtime (4) · cashregisterid (4) · customerid (4) · productid (4) · price (4) · data |
//! | `insertbench_marketsegment` | price (4) · customerid (4) · transactionid (8) | empty |
//! | `insertbench_registersegment` | cashregisterid (4) · price (4) · customerid (4) · transactionid (8) | empty |
//! | `insertbench_pdc` | price (4) · dateandtime (4) · customerid (4) · transactionid (8) | empty |
//!
//! Integers are big-endian; dateandtime is Unix seconds; price, a `float` column, is its
//! IEEE-754 bits made to sort as the numbers do (sign bit flipped for positive numbers, all
//! bits for negative ones), as MyRocks encodes floats in index keys. An index key is the
//! index's columns and then the primary key (MyRocks's layout), so that it is unique.
//!
//! Rows are iibench.py's: cashregisterid below 1,000, productid below 10,000, customerid
//! below 100,000, price = (uniform(0, 500) + customerid) / 100, data of 10 bytes, half of
//! it ('a's) compressible and the rest random (`data_length_min` = `data_length_max` = 10,
//! `data_random_pct` 50, the random part 0.75 of it for base64's overhead). Queries are
//! iibench's index-only range scans of 10 rows: marketsegment from `price >= p`,
//! registersegment from `cashregisterid > c`, pdc from `price >= p`, with p drawn as a
//! row's price and c as a row's cash register.
//!
//! Invariant, checked by [`IndexVerifier`]: each index holds exactly the keys derived from
//! the primary rows: no orphan entry, none missing.

use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use strata::internals::Rng;

/// The column families of the workload, index 0 first (the interface's "default").
pub const FAMILIES: [&str; 5] = [
    "default",
    "insertbench_pk",
    "insertbench_marketsegment",
    "insertbench_registersegment",
    "insertbench_pdc",
];
pub const PK_CF: usize = 1;
/// The families of the secondary indexes, in [`Index`] order.
pub const INDEX_CFS: [usize; 3] = [2, 3, 4];

const CASH_REGISTERS: u32 = 1_000;
const PRODUCTS: u32 = 10_000;
const CUSTOMERS: u32 = 100_000;
const MAX_PRICE: f64 = 500.0;
const DATA_LENGTH: usize = 10;
const DATA_RANDOM_PERCENT: usize = 50;
/// Index entries a range query reads (iibench's `rows_per_query`).
pub const ROWS_PER_QUERY: usize = 10;

/// The secondary indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    MarketSegment,
    RegisterSegment,
    Pdc,
}

impl Index {
    pub const ALL: [Index; 3] = [Index::MarketSegment, Index::RegisterSegment, Index::Pdc];

    pub fn name(self) -> &'static str {
        match self {
            Index::MarketSegment => "marketsegment",
            Index::RegisterSegment => "registersegment",
            Index::Pdc => "pdc",
        }
    }

    pub fn cf(self) -> usize {
        INDEX_CFS[self as usize]
    }
}

/// One row of `purchases_index`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub transactionid: u64,
    pub dateandtime: u32,
    pub cashregisterid: u32,
    pub customerid: u32,
    pub productid: u32,
    pub price: f32,
    pub data: Vec<u8>,
}

/// Bytes of a row's value before its data.
const ROW_FIXED: usize = 20;

impl Row {
    /// A new row with primary key `transactionid`, written at `dateandtime`.
    pub fn generate(rng: &mut Rng, transactionid: u64, dateandtime: u32) -> Row {
        let cashregisterid = rng.below(u64::from(CASH_REGISTERS)) as u32;
        let productid = rng.below(u64::from(PRODUCTS)) as u32;
        let customerid = rng.below(u64::from(CUSTOMERS)) as u32;
        let price = random_price(rng, customerid);
        let random_len = DATA_LENGTH * 3 * DATA_RANDOM_PERCENT / 400;
        let mut data = vec![b'a'; DATA_LENGTH - random_len];
        const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        data.extend((0..random_len).map(|_| BASE64[rng.below(64) as usize]));
        Row {
            transactionid,
            dateandtime,
            cashregisterid,
            customerid,
            productid,
            price,
            data,
        }
    }

    pub fn key(&self) -> [u8; 8] {
        self.transactionid.to_be_bytes()
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(ROW_FIXED + self.data.len());
        v.extend_from_slice(&self.dateandtime.to_be_bytes());
        v.extend_from_slice(&self.cashregisterid.to_be_bytes());
        v.extend_from_slice(&self.customerid.to_be_bytes());
        v.extend_from_slice(&self.productid.to_be_bytes());
        v.extend_from_slice(&self.price.to_bits().to_be_bytes());
        v.extend_from_slice(&self.data);
        v
    }

    /// The row stored under `key` as `value`, or an error naming what does not parse.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Row, String> {
        let (Ok(k), true) = (<[u8; 8]>::try_from(key), value.len() >= ROW_FIXED) else {
            return Err(format!(
                "insertbench: a primary row that is not the workload's: key {key:02x?}, {} value bytes",
                value.len()
            ));
        };
        let word =
            |i: usize| u32::from_be_bytes([value[i], value[i + 1], value[i + 2], value[i + 3]]);
        Ok(Row {
            transactionid: u64::from_be_bytes(k),
            dateandtime: word(0),
            cashregisterid: word(4),
            customerid: word(8),
            productid: word(12),
            price: f32::from_bits(word(16)),
            data: value[ROW_FIXED..].to_vec(),
        })
    }

    /// The row's key in `index`.
    pub fn index_key(&self, index: Index) -> Vec<u8> {
        let mut k = Vec::with_capacity(20);
        let price = sortable_price(self.price);
        match index {
            Index::MarketSegment => {
                k.extend_from_slice(&price);
                k.extend_from_slice(&self.customerid.to_be_bytes());
            }
            Index::RegisterSegment => {
                k.extend_from_slice(&self.cashregisterid.to_be_bytes());
                k.extend_from_slice(&price);
                k.extend_from_slice(&self.customerid.to_be_bytes());
            }
            Index::Pdc => {
                k.extend_from_slice(&price);
                k.extend_from_slice(&self.dateandtime.to_be_bytes());
                k.extend_from_slice(&self.customerid.to_be_bytes());
            }
        }
        k.extend_from_slice(&self.key());
        k
    }
}

/// iibench's price for a customer: (uniform(0, max_price) + customerid) / 100.
fn random_price(rng: &mut Rng, customerid: u32) -> f32 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ((u * MAX_PRICE + f64::from(customerid)) / 100.0) as f32
}

/// A float's bytes in an order that sorts as the numbers do.
pub fn sortable_price(price: f32) -> [u8; 4] {
    let bits = price.to_bits();
    let sortable = if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    };
    sortable.to_be_bytes()
}

/// Where a query of `index` starts (its lower bound, included), drawn as iibench draws it.
pub fn query_start(rng: &mut Rng, index: Index) -> Vec<u8> {
    match index {
        Index::MarketSegment | Index::Pdc => {
            let customerid = rng.below(u64::from(CUSTOMERS)) as u32;
            sortable_price(random_price(rng, customerid)).to_vec()
        }
        // cashregisterid > c: from c + 1 on.
        Index::RegisterSegment => (rng.below(u64::from(CASH_REGISTERS)) as u32 + 1)
            .to_be_bytes()
            .to_vec(),
    }
}

/// Seconds since the Unix epoch, as a row's dateandtime.
pub fn now_seconds() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

/// Checks the invariant of the module's doc: feed it the primary rows and every index's
/// entries (in any order), then [`IndexVerifier::finish`].
#[derive(Default)]
pub struct IndexVerifier {
    expected: [HashSet<Vec<u8>>; 3],
    rows: u64,
    entries: [u64; 3],
    orphans: [u64; 3],
    found: [Vec<Vec<u8>>; 3],
    problems: Vec<String>,
}

impl IndexVerifier {
    /// A primary row; `with_indexes` false when the indexes are not built yet (l_i0).
    pub fn row(&mut self, key: &[u8], value: &[u8], with_indexes: bool) {
        self.rows += 1;
        match Row::decode(key, value) {
            Ok(row) if with_indexes => {
                for index in Index::ALL {
                    self.expected[index as usize].insert(row.index_key(index));
                }
            }
            Ok(_) => {}
            Err(e) if self.problems.len() < 10 => self.problems.push(e),
            Err(_) => {}
        }
    }

    pub fn index_entry(&mut self, index: Index, key: &[u8], value: &[u8]) {
        let i = index as usize;
        self.entries[i] += 1;
        if !value.is_empty() && self.problems.len() < 10 {
            self.problems
                .push(format!("{} entry {key:02x?} has a value", index.name()));
        }
        self.found[i].push(key.to_vec());
    }

    /// "N rows, each index N entries", or what is wrong.
    pub fn finish(mut self) -> Result<String, String> {
        for index in Index::ALL {
            let i = index as usize;
            for key in std::mem::take(&mut self.found[i]) {
                if !self.expected[i].remove(&key) {
                    self.orphans[i] += 1;
                }
            }
            let missing = self.expected[i].len();
            if self.orphans[i] > 0 || missing > 0 {
                self.problems.push(format!(
                    "{}: {} entries without a row, {missing} rows without an entry",
                    index.name(),
                    self.orphans[i]
                ));
            }
        }
        if self.problems.is_empty() {
            Ok(format!(
                "{} rows; marketsegment {}, registersegment {}, pdc {} entries",
                self.rows, self.entries[0], self.entries[1], self.entries[2]
            ))
        } else {
            Err(format!(
                "insertbench: the indexes do not match the rows: {}",
                self.problems.join("; ")
            ))
        }
    }
}

/// Keeps a writer at `rows_per_second`: how long to wait before writing more, given the
/// rows written so far.
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    started: Instant,
    rows_per_second: u64,
}

impl Pacer {
    pub fn new(rows_per_second: u64) -> Pacer {
        Pacer {
            started: Instant::now(),
            rows_per_second: rows_per_second.max(1),
        }
    }

    /// The wait before the next write, after `rows` rows, at `now`.
    pub fn wait(&self, rows: u64, now: Instant) -> Duration {
        let due = Duration::from_secs_f64(rows as f64 / self.rows_per_second as f64);
        (self.started + due).saturating_duration_since(now)
    }

    /// Whether `rows` rows in `seconds` kept the rate (within 5%).
    pub fn kept(&self, rows: u64, seconds: f64) -> bool {
        rows as f64 >= 0.95 * self.rows_per_second as f64 * seconds
    }
}

#[cfg(test)]
mod tests {
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
}
