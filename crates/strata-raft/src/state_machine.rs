//! The replicated keyspace (openraft's `RaftStateMachine`).
//!
//! A node's `sm/` directory:
//!
//! ```text
//! sm/CURRENT        the name of the live database, e.g. "db-3" (replaced atomically)
//! sm/db-N/          the live database: user keys in the default family; the family
//!                   `raft_meta` holds `applied` (last applied log id), `membership` and
//!                   the client sessions (`client/…` and `expiry/…`, see `sessions`)
//! sm/snapshots/     finished snapshots (see `snapshot`), and scratch files
//! ```
//!
//! Invariants:
//!
//! - Applying a run of entries is one `WriteBatch`: the data writes, the client sessions, the
//!   applied id and the membership go in together, so after any crash the data and the
//!   applied id agree. The batch is not synced: the log holds every committed entry until a
//!   snapshot covers it, and a snapshot is made from a checkpoint, which syncs the WAL first,
//!   so what a crash loses here is re-applied from the log.
//! - A snapshot is installed by unpacking it into `db-(N+1).tmp`, renaming that to `db-(N+1)`
//!   and then replacing `CURRENT`. A crash before the replacement leaves the old state (the
//!   new directory is removed at open); after it, the new one. Nothing mixes the two.
//! - Commands are checked before they are applied; one that the engine would refuse (a key
//!   too long, a range with start after end) is answered `succeeded: false` and changes
//!   nothing, rather than failing the whole batch and stopping the node.

use std::collections::HashMap;
use std::fs;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use openraft::storage::RaftStateMachine;
use openraft::{
    EntryPayload, LogId, OptionalSend, RaftLogId, RaftSnapshotBuilder, Snapshot, StorageError,
    StoredMembership,
};
use strata::{CfOptions, ColumnFamily, Db, Options, WriteBatch, WriteOptions};

use crate::codec::{self, decode, encode};
use crate::error::{Error, IoContext};
use crate::sessions::{self, RunSessions, Session};
use crate::snapshot::{self, Meta, SnapshotDir};
use crate::types::{ClientSeq, Command, Compare, Op, Request, Response, TypeConfig};

/// Column family of the applied id, membership and client sessions.
pub const META_CF: &str = "raft_meta";
const APPLIED: &[u8] = b"applied";
const MEMBERSHIP: &[u8] = b"membership";

type Entry = openraft::Entry<TypeConfig>;
/// A key and its value.
pub type Pair = (Vec<u8>, Vec<u8>);
/// openraft's stored membership for this crate's types.
pub type Membership = StoredMembership<u64, openraft::BasicNode>;

/// One generation of the state machine's database.
pub struct Keyspace {
    db: Db,
    meta: ColumnFamily,
}

impl Keyspace {
    fn open(dir: &Path) -> Result<Keyspace, Error> {
        let mut options = Options::default();
        options.create_if_missing = true;
        options.create_missing_column_families = true;
        let db = Db::open_cf(dir, options, [(META_CF, CfOptions::default())])?;
        let meta = db
            .cf(META_CF)
            .ok_or_else(|| Error::Corrupt(format!("{} has no family {META_CF}", dir.display())))?;
        Ok(Keyspace { db, meta })
    }

    fn read_meta<T: serde::de::DeserializeOwned>(&self, key: &[u8]) -> Result<Option<T>, Error> {
        read_meta(&self.db, &self.meta, key)
    }

    /// The last applied log id and the membership, as stored.
    pub fn applied_state(&self) -> Result<(Option<LogId<u64>>, Membership), Error> {
        let applied = self.read_meta(APPLIED)?;
        let membership = self.read_meta(MEMBERSHIP)?.unwrap_or_default();
        Ok((applied, membership))
    }

    /// The value of a user key.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.db.get(key)?)
    }

    /// Up to `limit` user pairs from `start` (inclusive) to `end` (exclusive; `None`: to the
    /// end), in key order.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Pair>, Error> {
        use std::ops::Bound;
        let upper = match end {
            Some(e) => Bound::Excluded(e.to_vec()),
            None => Bound::Unbounded,
        };
        let mut out = Vec::new();
        for item in self.db.range((Bound::Included(start.to_vec()), upper)) {
            if out.len() >= limit {
                break;
            }
            out.push(item?);
        }
        Ok(out)
    }

    /// A digest of every user key and value (FNV-1a over length-prefixed pairs): equal
    /// digests on two replicas mean equal keyspaces, barring a collision.
    pub fn digest(&self) -> Result<(u64, u64), Error> {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut count = 0;
        let mut feed = |bytes: &[u8]| {
            for &b in (bytes.len() as u64).to_be_bytes().iter().chain(bytes) {
                hash ^= u64::from(b);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for item in self.db.range::<&[u8], _>(..) {
            let (k, v) = item?;
            feed(&k);
            feed(&v);
            count += 1;
        }
        Ok((hash, count))
    }

    /// The database, for statistics.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Every stored client session, by client id.
    pub fn sessions(&self) -> Result<Vec<(u64, Session)>, Error> {
        sessions::stored(&self.db, &self.meta)
    }
}

fn read_meta<T: serde::de::DeserializeOwned>(
    db: &Db,
    cf: &ColumnFamily,
    key: &[u8],
) -> Result<Option<T>, Error> {
    match db.get_cf(cf, key)? {
        None => Ok(None),
        Some(bytes) => decode(&bytes).map(Some).map_err(|e| {
            Error::Corrupt(format!(
                "state machine meta {}: {e}",
                String::from_utf8_lossy(key)
            ))
        }),
    }
}

/// The live keyspace, shared with readers (the server's local reads). An install replaces it
/// whole; a reader holding the old one finishes on the old one.
#[derive(Clone)]
pub struct SharedKeyspace(Arc<RwLock<Arc<Keyspace>>>);

impl SharedKeyspace {
    /// The keyspace live now.
    pub fn get(&self) -> Arc<Keyspace> {
        match self.0.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn replace(&self, keyspace: Arc<Keyspace>) -> Arc<Keyspace> {
        let mut g = match self.0.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        std::mem::replace(&mut *g, keyspace)
    }
}

/// The state machine of one node.
pub struct StateMachine {
    root: PathBuf,
    generation: u64,
    live: SharedKeyspace,
    applied: Option<LogId<u64>>,
    membership: Membership,
    snapshots: SnapshotDir,
    scratch: Arc<AtomicU64>,
    session_expiry: u64,
}

fn db_name(generation: u64) -> String {
    format!("db-{generation}")
}

impl StateMachine {
    /// Opens (creating if missing) the state machine in `root`, removing what an interrupted
    /// install left.
    pub fn open(root: &Path) -> Result<StateMachine, Error> {
        fs::create_dir_all(root).context(|| format!("create {}", root.display()))?;
        let current = root.join("CURRENT");
        let generation = match fs::read_to_string(&current) {
            Ok(text) => text
                .trim()
                .strip_prefix("db-")
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| {
                    Error::Corrupt(format!("{} names {:?}", current.display(), text.trim()))
                })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Keyspace::open(&root.join(db_name(1)))?;
                snapshot::write_atomic(&current, db_name(1).as_bytes())?;
                1
            }
            Err(e) => return Err(Error::Io(format!("read {}", current.display()), e)),
        };
        // Other generations are the old state after an install, or a new one not made live.
        for entry in fs::read_dir(root).context(|| format!("list {}", root.display()))? {
            let entry = entry.context(|| format!("list {}", root.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("db-") && name != db_name(generation) {
                fs::remove_dir_all(entry.path())
                    .context(|| format!("remove {}", entry.path().display()))?;
            }
        }
        let keyspace = Keyspace::open(&root.join(db_name(generation)))?;
        let (applied, membership) = keyspace.applied_state()?;
        let snapshots = SnapshotDir::open(&root.join("snapshots"))?;
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Ok(StateMachine {
            root: root.to_path_buf(),
            generation,
            live: SharedKeyspace(Arc::new(RwLock::new(Arc::new(keyspace)))),
            applied,
            membership,
            snapshots,
            scratch: Arc::new(AtomicU64::new(start)),
            session_expiry: sessions::DEFAULT_EXPIRY_ENTRIES,
        })
    }

    /// Client sessions expire `entries` log entries after their last use (see `sessions`;
    /// it must be the same on every replica).
    pub fn with_session_expiry(mut self, entries: u64) -> StateMachine {
        self.session_expiry = entries;
        self
    }

    /// A handle on the live keyspace for readers.
    pub fn keyspace(&self) -> SharedKeyspace {
        self.live.clone()
    }

    fn apply_entries(&mut self, entries: Vec<Entry>) -> Result<Vec<Response>, Error> {
        let keyspace = self.live.get();
        let mut run = Run::new(&keyspace, self.session_expiry);
        let mut responses = Vec::with_capacity(entries.len());
        let mut applied = None;
        let mut membership = None;
        for entry in entries {
            let log_id = *entry.get_log_id();
            applied = Some(log_id);
            run.index = log_id.index;
            match entry.payload {
                EntryPayload::Blank => responses.push(Response::default()),
                EntryPayload::Normal(request) => responses.push(run.apply(&request)?),
                EntryPayload::Membership(m) => {
                    membership = Some(Membership::new(Some(log_id), m));
                    responses.push(Response::default());
                }
            }
        }
        let mut batch = run.finish(applied.map_or(0, |id| id.index))?;
        let encode_err = |e: serde_json::Error| Error::Corrupt(e.to_string());
        if let Some(id) = &applied {
            batch.put_cf(&keyspace.meta, APPLIED, encode(id).map_err(encode_err)?);
        }
        if let Some(m) = &membership {
            batch.put_cf(&keyspace.meta, MEMBERSHIP, encode(m).map_err(encode_err)?);
        }
        keyspace.db.write(batch, &WriteOptions::default())?;
        if applied.is_some() {
            self.applied = applied;
        }
        if let Some(m) = membership {
            self.membership = m;
        }
        Ok(responses)
    }

    /// Installs the snapshot read from `file` (blocking: unpacks and syncs every file).
    fn install_blocking(
        root: &Path,
        generation: u64,
        snapshots: &SnapshotDir,
        meta: &Meta,
        mut file: fs::File,
    ) -> Result<Keyspace, Error> {
        file.seek(SeekFrom::Start(0))
            .context(|| "rewind received snapshot".to_string())?;
        // Keep the archive: this node may have to send it on.
        let archive = snapshots.archive_path(&meta.snapshot_id);
        let partial = snapshots.scratch_path(&format!("{}.snap", meta.snapshot_id));
        let mut out =
            fs::File::create(&partial).context(|| format!("create {}", partial.display()))?;
        std::io::copy(&mut file, &mut out).context(|| format!("write {}", partial.display()))?;
        out.sync_all()
            .context(|| format!("sync {}", partial.display()))?;
        fs::rename(&partial, &archive).context(|| format!("rename {}", partial.display()))?;

        let name = db_name(generation);
        let tmp = root.join(format!("{name}.tmp"));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).context(|| format!("remove {}", tmp.display()))?;
        }
        let input = fs::File::open(&archive).context(|| format!("open {}", archive.display()))?;
        snapshot::unpack(input, &tmp)?;
        let dir = root.join(&name);
        fs::rename(&tmp, &dir).context(|| format!("rename {}", tmp.display()))?;
        snapshot::sync_dir(root)?;
        let keyspace = Keyspace::open(&dir)?;
        let (applied, _) = keyspace.applied_state()?;
        if applied != meta.last_log_id {
            return Err(Error::Corrupt(format!(
                "snapshot {} holds state applied to {:?}, its meta says {:?}",
                meta.snapshot_id, applied, meta.last_log_id
            )));
        }
        // The switch: before this rename the old state is live, after it the new one.
        snapshot::write_atomic(&root.join("CURRENT"), name.as_bytes())?;
        Ok(keyspace)
    }
}

/// One run of entries being applied: the batch, and what it has written so far, which later
/// commands in the run must see (a compare-and-set after a put of the same key).
struct Run<'a> {
    keyspace: &'a Keyspace,
    batch: WriteBatch,
    step: u64,
    points: HashMap<Vec<u8>, (u64, Option<Vec<u8>>)>,
    ranges: Vec<(u64, Vec<u8>, Vec<u8>)>,
    sessions: RunSessions<'a>,
    /// The index of the entry being applied.
    index: u64,
}

impl<'a> Run<'a> {
    fn new(keyspace: &'a Keyspace, session_expiry: u64) -> Run<'a> {
        Run {
            keyspace,
            batch: WriteBatch::new(),
            step: 0,
            points: HashMap::new(),
            ranges: Vec::new(),
            sessions: RunSessions::new(&keyspace.db, &keyspace.meta, session_expiry),
            index: 0,
        }
    }

    /// The value of `key` as this run has left it.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let range_step = self
            .ranges
            .iter()
            .filter(|(_, s, e)| s.as_slice() <= key && key < e.as_slice())
            .map(|(step, _, _)| *step)
            .max();
        match (self.points.get(key), range_step) {
            // A point write after every range delete covering the key decides.
            (Some((step, value)), r) if r.is_none_or(|r| *step > r) => Ok(value.clone()),
            // Otherwise a covering range delete does.
            (_, Some(_)) => Ok(None),
            // Untouched by this run: the database.
            _ => self.keyspace.get(key),
        }
    }

    fn write(&mut self, op: &Op) {
        self.step += 1;
        match op {
            Op::Put { key, value } => {
                self.batch.put(key, value);
                self.points
                    .insert(key.clone(), (self.step, Some(value.clone())));
            }
            Op::Delete { key } => {
                self.batch.delete(key);
                self.points.insert(key.clone(), (self.step, None));
            }
            Op::DeleteRange { start, end } => {
                self.batch.delete_range(start, end);
                self.ranges.push((self.step, start.clone(), end.clone()));
            }
        }
    }

    fn holds(&self, compare: &[Compare]) -> Result<bool, Error> {
        for c in compare {
            if self.get(&c.key)? != c.value {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn apply(&mut self, request: &Request) -> Result<Response, Error> {
        if let Command::Group(requests) = &request.command {
            if request.client.is_some() {
                // A group has no session of its own; one claiming one is refused whole.
                return Ok(Response::default());
            }
            let mut each = Vec::with_capacity(requests.len());
            for r in requests {
                each.push(match r.command {
                    Command::Group(_) => Response::default(),
                    _ => self.apply(r)?,
                });
            }
            return Ok(Response {
                succeeded: true,
                duplicate: false,
                each,
            });
        }
        let mut previous = None;
        if let Some(ClientSeq { client, seq }) = request.client {
            if let Some(last) = self.sessions.get(client)? {
                previous = Some(last.last_index);
                if self.sessions.expired(&last, self.index) {
                    // Idle past its expiry: as if never seen (see `sessions`).
                } else if seq == last.seq {
                    return Ok(Response {
                        duplicate: true,
                        ..last.response
                    });
                } else if seq < last.seq {
                    // Older than the last answered: its answer is gone; it was applied or
                    // superseded, and is not applied now.
                    return Ok(Response {
                        succeeded: false,
                        duplicate: true,
                        each: Vec::new(),
                    });
                }
            }
        }
        let succeeded = match request.command.check() {
            Err(_) => false,
            Ok(()) => match &request.command {
                Command::Batch(ops) => {
                    ops.iter().for_each(|op| self.write(op));
                    true
                }
                Command::CompareAndSet { compare, ops } => {
                    let holds = self.holds(compare)?;
                    if holds {
                        ops.iter().for_each(|op| self.write(op));
                    }
                    holds
                }
                Command::Group(_) => false,
            },
        };
        let response = Response {
            succeeded,
            duplicate: false,
            each: Vec::new(),
        };
        if let Some(ClientSeq { client, seq }) = request.client {
            let session = Session {
                seq,
                response: response.clone(),
                last_index: self.index,
            };
            self.sessions
                .record(&mut self.batch, client, previous, &session)?;
        }
        Ok(response)
    }

    /// The run's batch, with the sessions expired once `applied` is applied deleted.
    fn finish(mut self, applied: u64) -> Result<WriteBatch, Error> {
        self.sessions.expire(&mut self.batch, applied)?;
        Ok(self.batch)
    }
}

/// Builds snapshots from checkpoints of the live keyspace, concurrently with applies.
pub struct SnapshotBuilder {
    live: SharedKeyspace,
    snapshots: SnapshotDir,
    scratch: Arc<AtomicU64>,
}

impl SnapshotBuilder {
    fn build_blocking(&self) -> Result<Meta, Error> {
        let keyspace = self.live.get();
        let n = self.scratch.fetch_add(1, Ordering::Relaxed);
        let ckpt = self.snapshots.scratch_path(&format!("ckpt-{n}"));
        // A checkpoint syncs the WAL and is consistent: the applied id inside it matches the
        // data inside it, whatever is applied meanwhile.
        keyspace.db.checkpoint(&ckpt)?;
        let (applied, membership) = {
            let db = Db::open_read_only(&ckpt, Options::default())?;
            let cf = db
                .cf(META_CF)
                .ok_or_else(|| Error::Corrupt(format!("checkpoint without {META_CF}")))?;
            let applied: Option<LogId<u64>> = read_meta(&db, &cf, APPLIED)?;
            let membership: Membership = read_meta(&db, &cf, MEMBERSHIP)?.unwrap_or_default();
            (applied, membership)
        };
        let (term, index) = applied
            .map(|id| (id.leader_id.term, id.index))
            .unwrap_or((0, 0));
        let meta = Meta {
            last_log_id: applied,
            last_membership: membership,
            snapshot_id: format!("{term}-{index}-{n}"),
        };
        let archive = self.snapshots.archive_path(&meta.snapshot_id);
        snapshot::pack(&ckpt, &archive)?;
        fs::remove_dir_all(&ckpt).context(|| format!("remove {}", ckpt.display()))?;
        self.snapshots.publish(&meta)?;
        Ok(meta)
    }
}

async fn open_archive(path: &Path) -> Result<tokio::fs::File, StorageError<u64>> {
    tokio::fs::File::open(path)
        .await
        .map_err(|e| codec::read_snapshot(Error::Io(format!("open {}", path.display()), e)))
}

fn join_error(e: tokio::task::JoinError) -> Error {
    Error::Io("snapshot task".into(), std::io::Error::other(e.to_string()))
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError<u64>> {
        let builder = SnapshotBuilder {
            live: self.live.clone(),
            snapshots: self.snapshots.clone(),
            scratch: self.scratch.clone(),
        };
        let meta = tokio::task::spawn_blocking(move || builder.build_blocking())
            .await
            .map_err(|e| codec::write_snapshot(join_error(e)))?
            .map_err(codec::write_snapshot)?;
        let file = open_archive(&self.snapshots.archive_path(&meta.snapshot_id)).await?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(file),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<u64>>, Membership), StorageError<u64>> {
        Ok((self.applied, self.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Response>, StorageError<u64>>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        self.apply_entries(entries).map_err(codec::write_sm)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            live: self.live.clone(),
            snapshots: self.snapshots.clone(),
            scratch: self.scratch.clone(),
        }
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<tokio::fs::File>, StorageError<u64>> {
        // openraft receives one snapshot at a time: an earlier incoming file is done with.
        self.snapshots
            .remove_scratch("incoming-")
            .map_err(codec::write_snapshot)?;
        let n = self.scratch.fetch_add(1, Ordering::Relaxed);
        let path = self.snapshots.scratch_path(&format!("incoming-{n}"));
        let file = tokio::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .await
            .map_err(|e| {
                codec::write_snapshot(Error::Io(format!("create {}", path.display()), e))
            })?;
        Ok(Box::new(file))
    }

    async fn install_snapshot(
        &mut self,
        meta: &Meta,
        snapshot: Box<tokio::fs::File>,
    ) -> Result<(), StorageError<u64>> {
        let file = (*snapshot).into_std().await;
        let root = self.root.clone();
        let generation = self.generation + 1;
        let snapshots = self.snapshots.clone();
        let m = meta.clone();
        let keyspace = tokio::task::spawn_blocking(move || {
            StateMachine::install_blocking(&root, generation, &snapshots, &m, file)
        })
        .await
        .map_err(|e| codec::write_snapshot(join_error(e)))?
        .map_err(codec::write_snapshot)?;
        let old = self.live.replace(Arc::new(keyspace));
        let old_dir = self.root.join(db_name(self.generation));
        self.generation = generation;
        self.applied = meta.last_log_id;
        self.membership = meta.last_membership.clone();
        // The old directory goes now if no reader holds it, else at the next open.
        if Arc::into_inner(old).is_some() {
            let _ = fs::remove_dir_all(&old_dir);
        }
        self.snapshots
            .publish(meta)
            .map_err(codec::write_snapshot)?;
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<TypeConfig>>, StorageError<u64>> {
        let Some((meta, path)) = self.snapshots.current().map_err(codec::read_snapshot)? else {
            return Ok(None);
        };
        let file = open_archive(&path).await?;
        Ok(Some(Snapshot {
            meta,
            snapshot: Box::new(file),
        }))
    }
}
