//! A GlueSQL storage on Strata: SQL tables, secondary indexes, ALTER TABLE and transactions
//! over one Strata database.
//!
//! ```
//! use gluesql_core::prelude::{Glue, Payload};
//! use strata_gluesql::StrataStorage;
//!
//! let dir = tempfile::tempdir()?;
//! let mut glue = Glue::new(StrataStorage::open(dir.path())?);
//! glue.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")?;
//! glue.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")?;
//! let out = glue.execute("SELECT name FROM t WHERE id = 2")?;
//! assert!(matches!(&out[0], Payload::Select { rows, .. } if rows.len() == 1));
//! glue.storage.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Modules, bottom up:
//! - `codec`: the row format (version 1): a row's key and values as bytes.
//! - `catalog`: schemas and custom functions as versioned JSON.
//! - `keys`: where everything sits in the key space, so scans are range scans.
//! - `storage`: [`StrataStorage`], the transaction that every write goes through.
//! - `table`: a row and its index entries, written together.
//! - `store`, `index`, `alter_table`, `transaction`, `metadata`: GlueSQL's traits.
//!
//! Format: the key `F` holds the storage format version (1); a database with another
//! version, or with keys but no marker, is refused at open. Each stored value starts with its
//! own version byte. `docs/formats.md` of the repository describes the engine's files; this
//! crate's layout is in the `keys`, `codec` and `catalog` module docs.
#![warn(missing_docs)]

mod alter_table;
mod catalog;
mod codec;
mod error;
mod index;
mod keys;
mod metadata;
mod storage;
mod store;
mod table;
mod transaction;

pub use error::{Error, Result};
pub use keys::FORMAT_VERSION;
pub use storage::StrataStorage;
