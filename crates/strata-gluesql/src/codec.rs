//! The row format: how a row (its GlueSQL [`Key`] and its values) becomes the bytes of a
//! Strata value, and back.
//!
//! ```text
//! row      := version:u8 (= 1) key:value count:varint value{count}
//! value    := tag:u8 payload
//! varint   := LEB128, at most 10 bytes, of a u64
//! ```
//!
//! The row's key is written as the value it converts to ([`Key::None`] as `Null`), so that a
//! scan returns the exact key GlueSQL gave, whatever the bytes of the Strata key it sits
//! under. Integers and floats are big-endian (floats by their IEEE-754 bits, so NaN and the
//! infinities survive).
//!
//! | tag | value       | payload                                                    |
//! | --- | ----------- | ---------------------------------------------------------- |
//! | 0   | `Null`      | none                                                       |
//! | 1   | `Bool`      | 1 byte, 0 or 1                                             |
//! | 2-6 | `I8`..`I128`| 1, 2, 4, 8, 16 bytes, two's complement                     |
//! | 7-11| `U8`..`U128`| 1, 2, 4, 8, 16 bytes                                       |
//! | 12  | `F32`       | 4 bytes                                                    |
//! | 13  | `F64`       | 8 bytes                                                    |
//! | 14  | `Decimal`   | 16 bytes, rust_decimal's `serialize()`                     |
//! | 15  | `Str`       | varint length, UTF-8 bytes                                 |
//! | 16  | `Bytea`     | varint length, bytes                                       |
//! | 17  | `Inet`      | 4 then 4 octets, or 6 then 16 octets                       |
//! | 18  | `Date`      | i32 days from 0001-01-01 (CE day 1)                        |
//! | 19  | `Timestamp` | i32 days from CE, u32 seconds from midnight, u32 nanos     |
//! | 20  | `Time`      | u32 seconds from midnight, u32 nanos                       |
//! | 21  | `Interval`  | 0 then i32 months, or 1 then i64 microseconds              |
//! | 22  | `Uuid`      | 16 bytes                                                   |
//! | 23  | `Map`       | varint count, then count × (key as a `Str` payload, value) |
//! | 24  | `List`      | varint count, then count values                            |
//! | 25  | `Point`     | f64 x, f64 y                                               |
//!
//! Tags are on disk: never renumber one; a new variant takes a new tag. A change to the
//! layout of an existing tag needs a new row version. Decoding refuses an unknown version, an
//! unknown tag, a truncated payload, bytes left after the last value, invalid UTF-8 and
//! invalid dates or times, each with an error naming what is wrong.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use gluesql_core::chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use gluesql_core::data::{Interval, Key, Point, Value};
use rust_decimal::Decimal;

use crate::error::{corrupt, Result};

/// The version byte that starts every row this code writes. On disk: do not change.
pub const ROW_VERSION: u8 = 1;

// Value tags. On disk: do not change these numbers.
const NULL: u8 = 0;
const BOOL: u8 = 1;
const I8: u8 = 2;
const I16: u8 = 3;
const I32: u8 = 4;
const I64: u8 = 5;
const I128: u8 = 6;
const U8: u8 = 7;
const U16: u8 = 8;
const U32: u8 = 9;
const U64: u8 = 10;
const U128: u8 = 11;
const F32: u8 = 12;
const F64: u8 = 13;
const DECIMAL: u8 = 14;
const STR: u8 = 15;
const BYTEA: u8 = 16;
const INET: u8 = 17;
const DATE: u8 = 18;
const TIMESTAMP: u8 = 19;
const TIME: u8 = 20;
const INTERVAL: u8 = 21;
const UUID: u8 = 22;
const MAP: u8 = 23;
const LIST: u8 = 24;
const POINT: u8 = 25;

/// Nesting deeper than this (lists in lists, maps in maps) is refused when decoding, so that
/// a corrupt row cannot exhaust the stack.
const MAX_DEPTH: usize = 128;

/// Encodes a row: its key and its values.
pub fn encode_row(key: &Key, values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + values.len() * 9);
    out.push(ROW_VERSION);
    encode_value(&Value::from(key.clone()), &mut out);
    put_varint(&mut out, values.len() as u64);
    for value in values {
        encode_value(value, &mut out);
    }
    out
}

/// Decodes a row written by [`encode_row`]. `what` names the row in errors.
pub fn decode_row(bytes: &[u8], what: &dyn Fn() -> String) -> Result<(Key, Vec<Value>)> {
    let mut r = Reader { bytes, what };
    let version = r.u8("the row format version")?;
    if version != ROW_VERSION {
        return Err(corrupt(format!(
            "{}: unknown row format version {version} (this build reads version {ROW_VERSION})",
            what()
        )));
    }
    let key = r.value(0)?;
    let key = Key::try_from(key).map_err(|e| corrupt(format!("{}: bad row key: {e}", what())))?;
    let count = r.varint("the column count")?;
    let mut values = Vec::with_capacity(count.min(1024) as usize);
    for _ in 0..count {
        values.push(r.value(0)?);
    }
    r.finish()?;
    Ok((key, values))
}

/// Encodes one value on its own (used for table metadata).
pub fn encode_single(value: &Value) -> Vec<u8> {
    let mut out = vec![ROW_VERSION];
    encode_value(value, &mut out);
    out
}

/// Decodes a value written by [`encode_single`].
pub fn decode_single(bytes: &[u8], what: &dyn Fn() -> String) -> Result<Value> {
    let mut r = Reader { bytes, what };
    let version = r.u8("the format version")?;
    if version != ROW_VERSION {
        return Err(corrupt(format!(
            "{}: unknown format version {version} (this build reads version {ROW_VERSION})",
            what()
        )));
    }
    let value = r.value(0)?;
    r.finish()?;
    Ok(value)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn encode_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.push(NULL),
        Value::Bool(v) => out.extend([BOOL, u8::from(*v)]),
        Value::I8(v) => {
            out.push(I8);
            out.extend(v.to_be_bytes());
        }
        Value::I16(v) => {
            out.push(I16);
            out.extend(v.to_be_bytes());
        }
        Value::I32(v) => {
            out.push(I32);
            out.extend(v.to_be_bytes());
        }
        Value::I64(v) => {
            out.push(I64);
            out.extend(v.to_be_bytes());
        }
        Value::I128(v) => {
            out.push(I128);
            out.extend(v.to_be_bytes());
        }
        Value::U8(v) => out.extend([U8, *v]),
        Value::U16(v) => {
            out.push(U16);
            out.extend(v.to_be_bytes());
        }
        Value::U32(v) => {
            out.push(U32);
            out.extend(v.to_be_bytes());
        }
        Value::U64(v) => {
            out.push(U64);
            out.extend(v.to_be_bytes());
        }
        Value::U128(v) => {
            out.push(U128);
            out.extend(v.to_be_bytes());
        }
        Value::F32(v) => {
            out.push(F32);
            out.extend(v.to_bits().to_be_bytes());
        }
        Value::F64(v) => {
            out.push(F64);
            out.extend(v.to_bits().to_be_bytes());
        }
        Value::Decimal(v) => {
            out.push(DECIMAL);
            out.extend(v.serialize());
        }
        Value::Str(v) => {
            out.push(STR);
            put_bytes(out, v.as_bytes());
        }
        Value::Bytea(v) => {
            out.push(BYTEA);
            put_bytes(out, v);
        }
        Value::Inet(IpAddr::V4(v)) => {
            out.extend([INET, 4]);
            out.extend(v.octets());
        }
        Value::Inet(IpAddr::V6(v)) => {
            out.extend([INET, 6]);
            out.extend(v.octets());
        }
        Value::Date(v) => {
            out.push(DATE);
            out.extend(v.num_days_from_ce().to_be_bytes());
        }
        Value::Timestamp(v) => {
            out.push(TIMESTAMP);
            out.extend(v.date().num_days_from_ce().to_be_bytes());
            out.extend(v.time().num_seconds_from_midnight().to_be_bytes());
            out.extend(v.time().nanosecond().to_be_bytes());
        }
        Value::Time(v) => {
            out.push(TIME);
            out.extend(v.num_seconds_from_midnight().to_be_bytes());
            out.extend(v.nanosecond().to_be_bytes());
        }
        Value::Interval(Interval::Month(m)) => {
            out.extend([INTERVAL, 0]);
            out.extend(m.to_be_bytes());
        }
        Value::Interval(Interval::Microsecond(us)) => {
            out.extend([INTERVAL, 1]);
            out.extend(us.to_be_bytes());
        }
        Value::Uuid(v) => {
            out.push(UUID);
            out.extend(v.to_be_bytes());
        }
        Value::Map(map) => {
            out.push(MAP);
            put_varint(out, map.len() as u64);
            for (k, v) in map {
                put_bytes(out, k.as_bytes());
                encode_value(v, out);
            }
        }
        Value::List(list) => {
            out.push(LIST);
            put_varint(out, list.len() as u64);
            for v in list {
                encode_value(v, out);
            }
        }
        Value::Point(p) => {
            out.push(POINT);
            out.extend(p.x.to_bits().to_be_bytes());
            out.extend(p.y.to_bits().to_be_bytes());
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    what: &'a dyn Fn() -> String,
}

impl Reader<'_> {
    fn truncated(&self, field: &str) -> crate::error::Error {
        corrupt(format!("{}: truncated in {field}", (self.what)()))
    }

    fn take<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let Some((head, rest)) = self.bytes.split_first_chunk::<N>() else {
            return Err(self.truncated(field));
        };
        self.bytes = rest;
        Ok(*head)
    }

    fn u8(&mut self, field: &str) -> Result<u8> {
        Ok(self.take::<1>(field)?[0])
    }

    fn varint(&mut self, field: &str) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.u8(field)?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt(format!(
            "{}: varint longer than 10 bytes in {field}",
            (self.what)()
        )))
    }

    fn slice(&mut self, field: &str) -> Result<&[u8]> {
        let len = self.varint(field)?;
        if len > self.bytes.len() as u64 {
            return Err(self.truncated(field));
        }
        let (head, rest) = self.bytes.split_at(len as usize);
        self.bytes = rest;
        Ok(head)
    }

    fn string(&mut self, field: &str) -> Result<String> {
        let what = self.what;
        let bytes = self.slice(field)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| corrupt(format!("{}: {field} is not valid UTF-8", what())))
    }

    fn invalid(&self, field: &str) -> crate::error::Error {
        corrupt(format!("{}: invalid {field}", (self.what)()))
    }

    fn date(&mut self) -> Result<NaiveDate> {
        let days = i32::from_be_bytes(self.take("a date")?);
        NaiveDate::from_num_days_from_ce_opt(days).ok_or_else(|| self.invalid("date"))
    }

    fn time(&mut self) -> Result<NaiveTime> {
        let secs = u32::from_be_bytes(self.take("a time")?);
        let nanos = u32::from_be_bytes(self.take("a time")?);
        NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos)
            .ok_or_else(|| self.invalid("time"))
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(corrupt(format!(
                "{}: values nested deeper than {MAX_DEPTH}",
                (self.what)()
            )));
        }
        let tag = self.u8("a value tag")?;
        Ok(match tag {
            NULL => Value::Null,
            BOOL => match self.u8("a bool")? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                _ => return Err(self.invalid("bool")),
            },
            I8 => Value::I8(i8::from_be_bytes(self.take("an I8")?)),
            I16 => Value::I16(i16::from_be_bytes(self.take("an I16")?)),
            I32 => Value::I32(i32::from_be_bytes(self.take("an I32")?)),
            I64 => Value::I64(i64::from_be_bytes(self.take("an I64")?)),
            I128 => Value::I128(i128::from_be_bytes(self.take("an I128")?)),
            U8 => Value::U8(self.u8("a U8")?),
            U16 => Value::U16(u16::from_be_bytes(self.take("a U16")?)),
            U32 => Value::U32(u32::from_be_bytes(self.take("a U32")?)),
            U64 => Value::U64(u64::from_be_bytes(self.take("a U64")?)),
            U128 => Value::U128(u128::from_be_bytes(self.take("a U128")?)),
            F32 => Value::F32(f32::from_bits(u32::from_be_bytes(self.take("an F32")?))),
            F64 => Value::F64(f64::from_bits(u64::from_be_bytes(self.take("an F64")?))),
            DECIMAL => Value::Decimal(Decimal::deserialize(self.take("a decimal")?)),
            STR => Value::Str(self.string("a string")?),
            BYTEA => Value::Bytea(self.slice("a bytea")?.to_vec()),
            INET => match self.u8("an inet")? {
                4 => Value::Inet(IpAddr::V4(Ipv4Addr::from(self.take::<4>("an inet")?))),
                6 => Value::Inet(IpAddr::V6(Ipv6Addr::from(self.take::<16>("an inet")?))),
                _ => return Err(self.invalid("inet family")),
            },
            DATE => Value::Date(self.date()?),
            TIMESTAMP => {
                let date = self.date()?;
                let time = self.time()?;
                Value::Timestamp(NaiveDateTime::new(date, time))
            }
            TIME => Value::Time(self.time()?),
            INTERVAL => match self.u8("an interval")? {
                0 => Value::Interval(Interval::Month(i32::from_be_bytes(
                    self.take("an interval")?,
                ))),
                1 => Value::Interval(Interval::Microsecond(i64::from_be_bytes(
                    self.take("an interval")?,
                ))),
                _ => return Err(self.invalid("interval unit")),
            },
            UUID => Value::Uuid(u128::from_be_bytes(self.take("a uuid")?)),
            MAP => {
                let count = self.varint("a map length")?;
                let mut map = BTreeMap::new();
                for _ in 0..count {
                    let k = self.string("a map key")?;
                    let v = self.value(depth + 1)?;
                    map.insert(k, v);
                }
                Value::Map(map)
            }
            LIST => {
                let count = self.varint("a list length")?;
                let mut list = Vec::with_capacity(count.min(1024) as usize);
                for _ in 0..count {
                    list.push(self.value(depth + 1)?);
                }
                Value::List(list)
            }
            POINT => {
                let x = f64::from_bits(u64::from_be_bytes(self.take("a point")?));
                let y = f64::from_bits(u64::from_be_bytes(self.take("a point")?));
                Value::Point(Point::new(x, y))
            }
            other => {
                return Err(corrupt(format!(
                    "{}: unknown value tag {other}",
                    (self.what)()
                )));
            }
        })
    }

    fn finish(&self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(corrupt(format!(
                "{}: {} bytes left after the last value",
                (self.what)(),
                self.bytes.len()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn what() -> String {
        "row t/1".to_owned()
    }

    fn every_kind() -> Vec<Value> {
        let date = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        let time = NaiveTime::from_hms_nano_opt(23, 59, 58, 123_456_789).unwrap();
        vec![
            Value::Null,
            Value::Bool(true),
            Value::I8(-8),
            Value::I16(-16),
            Value::I32(-32),
            Value::I64(i64::MIN),
            Value::I128(i128::MAX),
            Value::U8(8),
            Value::U16(16),
            Value::U32(32),
            Value::U64(u64::MAX),
            Value::U128(u128::MAX),
            Value::F32(f32::INFINITY),
            Value::F64(-0.5),
            Value::Decimal(Decimal::from_str("-123.4500").unwrap()),
            Value::Str("héllo".to_owned()),
            Value::Bytea(vec![0, 1, 255]),
            Value::Inet(IpAddr::from_str("10.0.0.1").unwrap()),
            Value::Inet(IpAddr::from_str("::1").unwrap()),
            Value::Date(date),
            Value::Timestamp(NaiveDateTime::new(date, time)),
            Value::Time(time),
            Value::Interval(Interval::Month(-14)),
            Value::Interval(Interval::Microsecond(1_000_001)),
            Value::Uuid(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
            Value::Map(BTreeMap::from([
                ("a".to_owned(), Value::I64(1)),
                (
                    "b".to_owned(),
                    Value::List(vec![Value::Null, Value::Bool(false)]),
                ),
            ])),
            Value::List(vec![Value::Str(String::new()), Value::Map(BTreeMap::new())]),
            Value::Point(Point::new(1.5, -2.25)),
        ]
    }

    #[test]
    fn every_kind_of_value_survives_a_round_trip() {
        let values = every_kind();
        let key = Key::Str("k".to_owned());
        let bytes = encode_row(&key, &values);
        assert_eq!(decode_row(&bytes, &what).unwrap(), (key, values));
    }

    #[test]
    fn nan_keeps_its_bits() {
        let bytes = encode_row(&Key::None, &[Value::F64(f64::NAN)]);
        let (key, values) = decode_row(&bytes, &what).unwrap();
        assert_eq!(key, Key::None);
        assert!(matches!(values[0], Value::F64(v) if v.is_nan()));
    }

    /// Each case: bytes and the part of the error that names what is wrong.
    #[test]
    fn corrupt_rows_are_refused_with_a_reason() {
        let good = encode_row(&Key::I64(1), &[Value::Str("abc".to_owned())]);
        let mut trailing = good.clone();
        trailing.push(0);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![], "truncated in the row format version"),
            (vec![2], "unknown row format version 2"),
            (vec![1, 99], "unknown value tag 99"),
            (good[..good.len() - 1].to_vec(), "truncated in a string"),
            (trailing, "1 bytes left after the last value"),
            (
                vec![1, NULL, 1, STR, 1, 0xff],
                "a string is not valid UTF-8",
            ),
            (vec![1, NULL, 1, BOOL, 2], "invalid bool"),
            (vec![1, NULL, 1, INET, 5], "invalid inet family"),
            (
                vec![1, MAP, 0, 0],
                "bad row key: key: MAP data type cannot be used as Key",
            ),
            (
                vec![
                    1, NULL, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1,
                ],
                "varint longer than 10 bytes",
            ),
        ];
        for (bytes, expected) in cases {
            let err = decode_row(&bytes, &what).unwrap_err().to_string();
            assert!(err.contains("row t/1"), "{err}");
            assert!(err.contains(expected), "{bytes:?}: {err} lacks {expected}");
        }
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut bytes = vec![1, NULL, 1];
        bytes.extend(std::iter::repeat_n([LIST, 1], MAX_DEPTH + 2).flatten());
        bytes.push(NULL);
        let err = decode_row(&bytes, &what).unwrap_err().to_string();
        assert!(err.contains("nested deeper than"), "{err}");
    }
}
