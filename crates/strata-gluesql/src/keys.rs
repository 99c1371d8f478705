//! The key layout: where schemas, rows and index entries sit in Strata's one ordered key
//! space, so that GlueSQL's scans become Strata range scans.
//!
//! ```text
//! b"F"                                   format marker: u32 big-endian format version (1)
//! b"S" table                             schema: version byte 1, then JSON of GlueSQL's Schema
//! b"M" table                             metadata: codec::encode_single of a Map (CREATED)
//! b"C" FUNCTION                          custom function (name upper-cased): version 1, then JSON
//! b"Q" table                             next generated row id: u64 big-endian
//! b"R" esc(table) rowkey                 row: codec::encode_row of (key, values)
//! b"I" esc(table) esc(index) esc(value) rowkey    index entry: empty value
//! ```
//!
//! - `esc(bytes)` writes each 0x00 as 0x00 0xFF and ends with 0x00 0x01. It keeps byte order
//!   (for two strings a < b, esc(a) < esc(b)) and no escaped string is a prefix of another,
//!   so the fields after it cannot change the order it gives. Table and index names are
//!   escaped so that one table's rows are one contiguous range: `Ra` and `Rab` do not mix.
//! - `rowkey` is GlueSQL's `Key::to_cmp_be_bytes`: its byte order is the key order GlueSQL
//!   expects of a table scan (rows come back in primary-key order, and tables without a
//!   primary key get increasing `U64` keys, so those come back in insertion order). It is
//!   last in the key, so it needs no escaping.
//! - `value` in an index entry is `Value::to_cmp_be_bytes` of the indexed expression's value
//!   for the row: values of a type in their order, NULL after every value (GlueSQL's order
//!   for index scans). Rows with equal values follow in row-key order.
//!
//! Invariant (kept by writing a row and its index entries in one transaction): for each row
//! `R t k` and each index `i` of table `t`, there is exactly one entry `I t i v k`, with `v`
//! the index expression evaluated on the row, and no other entry of `t`.

/// The format version this code writes and reads. On disk: do not change.
pub const FORMAT_VERSION: u32 = 1;

/// The key of the format marker.
pub const FORMAT_KEY: &[u8] = b"F";

const SCHEMA: u8 = b'S';
const META: u8 = b'M';
const FUNCTION: u8 = b'C';
const SEQUENCE: u8 = b'Q';
const ROW: u8 = b'R';
const INDEX: u8 = b'I';

fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    out.extend([0, 1]);
}

fn tagged(tag: u8, name: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + name.len());
    key.push(tag);
    key.extend_from_slice(name.as_bytes());
    key
}

/// The key of a table's schema.
pub fn schema(table: &str) -> Vec<u8> {
    tagged(SCHEMA, table)
}

/// The prefix of every schema key.
pub fn schema_prefix() -> Vec<u8> {
    vec![SCHEMA]
}

/// The key of a table's metadata.
pub fn meta(table: &str) -> Vec<u8> {
    tagged(META, table)
}

/// The prefix of every metadata key.
pub fn meta_prefix() -> Vec<u8> {
    vec![META]
}

/// The key of a custom function.
pub fn function(name: &str) -> Vec<u8> {
    tagged(FUNCTION, name)
}

/// The prefix of every custom function key.
pub fn function_prefix() -> Vec<u8> {
    vec![FUNCTION]
}

/// The key of a table's next generated row id.
pub fn sequence(table: &str) -> Vec<u8> {
    tagged(SEQUENCE, table)
}

/// The prefix of every row of `table`.
pub fn row_prefix(table: &str) -> Vec<u8> {
    let mut key = vec![ROW];
    escape_into(&mut key, table.as_bytes());
    key
}

/// The key of the row of `table` whose key bytes are `row_key`.
pub fn row(table: &str, row_key: &[u8]) -> Vec<u8> {
    let mut key = row_prefix(table);
    key.extend_from_slice(row_key);
    key
}

/// The prefix of every index entry of `table`, all indexes.
pub fn table_index_prefix(table: &str) -> Vec<u8> {
    let mut key = vec![INDEX];
    escape_into(&mut key, table.as_bytes());
    key
}

/// The prefix of every entry of one index.
pub fn index_prefix(table: &str, index: &str) -> Vec<u8> {
    let mut key = table_index_prefix(table);
    escape_into(&mut key, index.as_bytes());
    key
}

/// The prefix of the entries of one index whose value's bytes are `value`.
pub fn index_value_prefix(table: &str, index: &str, value: &[u8]) -> Vec<u8> {
    let mut key = index_prefix(table, index);
    escape_into(&mut key, value);
    key
}

/// The index entry of the row `row_key` with value bytes `value`.
pub fn index_entry(table: &str, index: &str, value: &[u8], row_key: &[u8]) -> Vec<u8> {
    let mut key = index_value_prefix(table, index, value);
    key.extend_from_slice(row_key);
    key
}

/// The first key after every key that starts with `prefix`, or `None` when there is none
/// (the prefix is all 0xFF).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_order_and_is_prefix_free() {
        let names: [&[u8]; 7] = [b"", b"\0", b"\0\0", b"\0a", b"a", b"a\0", b"ab"];
        let escaped: Vec<Vec<u8>> = names
            .iter()
            .map(|n| {
                let mut out = Vec::new();
                escape_into(&mut out, n);
                out
            })
            .collect();
        for (i, a) in escaped.iter().enumerate() {
            for (j, b) in escaped.iter().enumerate() {
                assert_eq!(
                    a.cmp(b),
                    names[i].cmp(names[j]),
                    "{:?} vs {:?}",
                    names[i],
                    names[j]
                );
                if i != j {
                    assert!(
                        !b.starts_with(a),
                        "{:?} is a prefix of {:?}",
                        names[i],
                        names[j]
                    );
                }
            }
        }
    }

    #[test]
    fn one_tables_rows_do_not_mix_with_a_longer_names() {
        let a_row = row("a", b"\xff\xff");
        let ab_row = row("ab", b"");
        let a_end = prefix_end(&row_prefix("a")).unwrap();
        assert!(a_row < a_end && ab_row >= a_end);
    }

    #[test]
    fn prefix_end_cases() {
        let cases: [(&[u8], Option<&[u8]>); 4] = [
            (b"a", Some(b"b")),
            (b"a\xff", Some(b"b")),
            (b"\xff\xff", None),
            (b"", None),
        ];
        for (prefix, end) in cases {
            assert_eq!(prefix_end(prefix).as_deref(), end, "{prefix:?}");
        }
    }
}
