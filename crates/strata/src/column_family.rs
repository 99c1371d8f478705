//! The handle of a column family: a named keyspace of a database with its own memtables,
//! tree and options, sharing the WAL, the manifest, the block cache and the background
//! threads with the others.
//!
//! A handle is a cheap clone: the family's id (what WAL records and manifest edits name), its
//! name, and a flag set when the family is dropped, so that every handle of a dropped family
//! fails with an error naming it instead of writing into a family that no longer exists. Ids
//! are never reused: a family created again under a dropped name gets a new id, and the old
//! handles stay dropped.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A column family of an open database, from `Db::create_cf`, `Db::cf` or
/// `Db::default_cf`. Pass it to the `_cf` methods of `Db` and `WriteBatch`.
///
/// # Examples
///
/// ```
/// use strata::{CfOptions, Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let users = db.create_cf("users", CfOptions::default())?;
/// db.put_cf(&users, b"alice", b"admin")?;
/// assert_eq!(db.get(b"alice")?, None); // the default family is another key space
/// db.close()?;
///
/// // Every family is named with its options when the database is opened again.
/// let db = Db::open_cf(dir.path(), Options::default(), [("users", CfOptions::default())])?;
/// let users = db.cf("users").expect("opened above");
/// assert_eq!(users.name(), "users");
/// assert_eq!(db.get_cf(&users, b"alice")?.as_deref(), Some(&b"admin"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ColumnFamily {
    id: u32,
    name: Arc<str>,
    dropped: Arc<AtomicBool>,
}

impl ColumnFamily {
    pub(crate) fn new(id: u32, name: &str) -> ColumnFamily {
        ColumnFamily {
            id,
            name: name.into(),
            dropped: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn name_arc(&self) -> Arc<str> {
        self.name.clone()
    }

    /// The family's id, as WAL records and the manifest name it (the default family is 0).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// True once the family has been dropped: every use of the handle then fails.
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    pub(crate) fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }
}

impl fmt::Debug for ColumnFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnFamily")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("dropped", &self.is_dropped())
            .finish()
    }
}
