//! The catalog: schemas and custom functions, stored as a version byte (1) followed by the
//! JSON of GlueSQL's own types (`Schema`, `CustomFunction`).
//!
//! JSON, not the row codec: these are GlueSQL's nested syntax trees (column defaults, index
//! expressions, function bodies), read once per statement, and JSON is what makes a catalog
//! entry readable with `strata get`. A GlueSQL release that changes these types could make old
//! entries unreadable; the version pin of `gluesql-core` guards against that, and decoding
//! fails with the entry's name rather than misreading it.

use gluesql_core::data::{CustomFunction, Schema};
use serde::{de::DeserializeOwned, Serialize};

use crate::error::{corrupt, Result};

/// The version byte of catalog entries. On disk: do not change.
const CATALOG_VERSION: u8 = 1;

fn encode<T: Serialize>(value: &T, what: &str) -> Result<Vec<u8>> {
    let mut out = vec![CATALOG_VERSION];
    serde_json::to_writer(&mut out, value)
        .map_err(|e| crate::error::refused(format!("cannot encode {what}: {e}")))?;
    Ok(out)
}

fn decode<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    match bytes.split_first() {
        Some((&CATALOG_VERSION, json)) => {
            serde_json::from_slice(json).map_err(|e| corrupt(format!("{what}: {e}")))
        }
        Some((v, _)) => Err(corrupt(format!(
            "{what}: unknown catalog format version {v} (this build reads version {CATALOG_VERSION})"
        ))),
        None => Err(corrupt(format!("{what}: empty value"))),
    }
}

/// Encodes a table's schema.
pub(crate) fn encode_schema(schema: &Schema) -> Result<Vec<u8>> {
    encode(
        schema,
        &format!("the schema of table {:?}", schema.table_name),
    )
}

/// Decodes the schema stored under `key` (named in errors).
pub(crate) fn decode_schema(bytes: &[u8], key: &[u8]) -> Result<Schema> {
    decode(bytes, &format!("schema {:?}", String::from_utf8_lossy(key)))
}

/// Encodes a custom function.
pub(crate) fn encode_function(function: &CustomFunction) -> Result<Vec<u8>> {
    encode(function, &format!("function {:?}", function.func_name))
}

/// Decodes the custom function stored under `key` (named in errors).
pub(crate) fn decode_function(bytes: &[u8], key: &[u8]) -> Result<CustomFunction> {
    decode(
        bytes,
        &format!("function {:?}", String::from_utf8_lossy(key)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_entries_are_refused_with_a_reason() {
        let cases: [(&[u8], &str); 3] = [
            (b"", "schema \"St\": empty value"),
            (b"\x02{}", "unknown catalog format version 2"),
            (b"\x01{", "schema \"St\": EOF while parsing"),
        ];
        for (bytes, expected) in cases {
            let err = decode_schema(bytes, b"St").unwrap_err().to_string();
            assert!(err.contains(expected), "{err} lacks {expected}");
        }
    }
}
