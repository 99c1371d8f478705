//! A cursor over a block: binary search over the restart points, then a scan of one
//! restart interval; the built-in orders compare in place (see [`BlockIter::seek`]).

use super::key_buf::KeyBuf;
use super::*;

/// Orders two keys in a built-in order: bytewise (or its reverse) user keys, whole
/// (`INTERNAL` false) or followed by an internal key's 8-byte trailer, compared descending
/// when the user keys are equal (`INTERNAL` true; a key shorter than a trailer is an empty
/// user key with trailer 0). The order of [`BlockOrder::compare`] for the matching variant,
/// written out here so that a seek's loops compare inline.
#[inline(always)]
pub(super) fn compare_in_byte_order<const INTERNAL: bool, const REVERSE: bool>(
    a: &[u8],
    b: &[u8],
) -> Ordering {
    crate::perf_context::perf_count!(user_key_comparison_count, 1);
    let user = |k: &[u8]| -> usize {
        match INTERNAL {
            true => k.len().saturating_sub(TRAILER_LEN),
            false => k.len(),
        }
    };
    let (ua, ub) = (user(a), user(b));
    let order = bytewise_compare(&a[..ua], &b[..ub]);
    let order = if REVERSE { order.reverse() } else { order };
    if !INTERNAL || order != Ordering::Equal {
        return order;
    }
    let trailer = |k: &[u8], at: usize| {
        k.get(at..)
            .and_then(|t| t.first_chunk::<TRAILER_LEN>())
            .map_or(0, |t| u64::from_le_bytes(*t))
    };
    trailer(b, ub).cmp(&trailer(a, ua))
}

/// The most bytes of a restart interval a seek asks for before scanning it.
const PREFETCHED_INTERVAL_BYTES: usize = 2048;

/// A binary search over at most this many restart points past the first asks for all of
/// their entries before its first probe.
const PREFETCHED_RESTARTS: usize = 8;

/// How a seek's scan of entries ended.
enum Scan {
    /// On the first entry at or after the target, or past the last entry.
    Done,
    /// An entry could not be placed from the bytes the scan keeps (possible only in a
    /// reverse order with internal keys, or in a block out of order): the caller scans again
    /// building every key.
    Rescan,
}

/// A cursor over one block. On malformed bytes it becomes invalid and `corrupt()` says why.
///
/// The current key is read in place when the block stores it whole (an entry that shares no
/// prefix: every restart point, so every entry of an index block) and built in a buffer
/// otherwise. A seek in a built-in order does not build the keys it passes over (see
/// [`BlockIter::seek`]).
#[derive(Clone)]
pub struct BlockIter {
    pub(super) block: Arc<Block>,
    pub(super) cmp: BlockOrder,
    /// Offset of the current entry; `restarts_at` when past the end.
    current: usize,
    /// Offset just after the current entry.
    next: usize,
    /// Where the current key's bytes are.
    key_at: KeyAt,
    /// The current key when it shares a prefix with the entry before it (`KeyAt::Built`).
    key: KeyBuf,
    value: (usize, usize),
    corrupt: Option<String>,
    /// The entries before the current one in its restart interval, as the last backward
    /// scan of the interval decoded them (their keys end to end in `prev_keys`, followed by
    /// the key the scan stopped on): `prev` takes the last one instead of decoding the
    /// interval again, so a reverse scan decodes each entry once, and builds each key once,
    /// where it is read from. Any other move empties it.
    prev_entries: Vec<PrevEntry>,
    prev_keys: Vec<u8>,
}

/// Where a cursor's current key is.
#[derive(Clone, Copy, Debug)]
enum KeyAt {
    /// Built in the cursor's `key`.
    Built,
    /// Stored whole in the block, at this range of its bytes.
    Block(usize, usize),
    /// In the cursor's `prev_keys`, at this range: a key a backward scan built.
    Remembered(usize, usize),
}

/// An entry remembered for `prev`: where it lies, its value, where its key ends.
#[derive(Clone, Copy)]
struct PrevEntry {
    current: usize,
    next: usize,
    value: (usize, usize),
    key_end: usize,
}

impl BlockIter {
    /// An unpositioned cursor over `block` ordered by `cmp`.
    pub fn new(block: Arc<Block>, cmp: BlockOrder) -> BlockIter {
        BlockIter::with_buffer(block, cmp, Vec::new())
    }

    /// As [`BlockIter::new`], building keys in `buffer` (its capacity is reused; get it
    /// back with [`BlockIter::into_buffer`]), so that hot paths do not allocate.
    pub fn with_buffer(block: Arc<Block>, cmp: BlockOrder, mut buffer: Vec<u8>) -> BlockIter {
        buffer.clear();
        let end = block.restarts_at;
        BlockIter {
            block,
            cmp,
            current: end,
            next: end,
            key_at: KeyAt::Built,
            key: KeyBuf::new(buffer),
            value: (0, 0),
            corrupt: None,
            prev_entries: Vec::new(),
            prev_keys: Vec::new(),
        }
    }

    /// Moves this cursor, unpositioned, to `block` (with the same order), keeping its buffers:
    /// a table iterator going from block to block allocates nothing.
    pub fn set_block(&mut self, block: Arc<Block>) {
        let end = block.restarts_at;
        self.block = block;
        self.current = end;
        self.next = end;
        self.key_at = KeyAt::Built;
        self.key.clear();
        self.value = (0, 0);
        self.corrupt = None;
        self.forget_prev_entries();
    }

    /// The key buffer, for reuse.
    pub fn into_buffer(self) -> Vec<u8> {
        self.key.into_heap()
    }

    /// True when on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.current < self.block.restarts_at && self.corrupt.is_none()
    }

    /// The current key.
    #[inline]
    pub fn key(&self) -> &[u8] {
        current_key(
            &self.block,
            self.key_at,
            self.key.as_slice(),
            &self.prev_keys,
        )
    }

    /// The current value.
    #[inline]
    pub fn value(&self) -> &[u8] {
        &self.block.bytes()[self.value.0..self.value.0 + self.value.1]
    }

    /// Where the current value lies in the block's bytes ([`Block::bytes`]).
    pub fn value_range(&self) -> std::ops::Range<usize> {
        self.value.0..self.value.0 + self.value.1
    }

    /// The block this cursor reads.
    pub fn block(&self) -> &Arc<Block> {
        &self.block
    }

    /// Why the block could not be decoded, if it could not.
    pub fn corrupt(&self) -> Option<&str> {
        self.corrupt.as_deref()
    }

    fn mark_corrupt(&mut self, why: &str) {
        self.corrupt = Some(why.to_string());
        self.current = self.block.restarts_at;
        self.next = self.block.restarts_at;
    }

    /// Decodes the entry at `self.next` into current; false at the end or on corruption.
    #[inline]
    fn parse_next(&mut self) -> bool {
        let at = self.next;
        let limit = self.block.restarts_at;
        if at >= limit {
            self.current = limit;
            return false;
        }
        let data = self.block.bytes();
        let Some((shared, unshared, vlen, kat)) = decode_entry(data, at, limit) else {
            self.mark_corrupt("bad entry in block");
            return false;
        };
        let own = &data[kat..kat + unshared];
        if shared == 0 {
            self.key_at = KeyAt::Block(kat, kat + unshared);
        } else {
            // The shared prefix is the previous key's, wherever that one is.
            let previous_len = match self.key_at {
                KeyAt::Block(start, end) | KeyAt::Remembered(start, end) => end - start,
                KeyAt::Built => self.key.len(),
            };
            if shared > previous_len {
                self.mark_corrupt("entry shares more bytes than the previous key has");
                return false;
            }
            match std::mem::replace(&mut self.key_at, KeyAt::Built) {
                KeyAt::Block(start, _) => {
                    self.key.clear();
                    self.key.extend(&data[start..start + shared]);
                }
                KeyAt::Remembered(start, _) => {
                    self.key.clear();
                    self.key.extend(&self.prev_keys[start..start + shared]);
                }
                KeyAt::Built => self.key.truncate(shared),
            }
            self.key.extend(own);
        }
        self.current = at;
        self.value = (kat + unshared, vlen);
        self.next = kat + unshared + vlen;
        true
    }

    fn seek_to_restart(&mut self, index: usize) {
        self.forget_prev_entries();
        self.key_at = KeyAt::Built;
        self.key.clear();
        self.next = self.block.restart(index);
        if self.next > self.block.restarts_at {
            self.mark_corrupt("restart point past the entries");
        }
    }

    /// Moves to the first entry.
    pub fn seek_to_first(&mut self) {
        if self.corrupt.is_some() {
            return;
        }
        self.seek_to_restart(0);
        self.parse_next();
    }

    /// Moves to the last entry.
    pub fn seek_to_last(&mut self) {
        if self.corrupt.is_some() {
            return;
        }
        let last = self.block.num_restarts - 1;
        self.prefetch_backward_from(last, self.block.restarts_at);
        self.seek_to_restart(last);
        self.scan_interval_to(self.block.restarts_at);
    }

    /// In a block with few restart points (a data block of large values), asks for all of
    /// their entries: a seek's binary search probes most of them, each on a line of its
    /// own (the restart array itself is one or two lines).
    fn prefetch_restart_entries(&self) {
        let block = &*self.block;
        let right = block.num_restarts.saturating_sub(1);
        if right > PREFETCHED_RESTARTS {
            return;
        }
        let data = block.bytes();
        for i in 1..=right {
            if let Some(byte) = data.get(block.restart(i)) {
                crate::util::prefetch(byte);
            }
        }
    }

    /// Asks for the lines of restart interval `index`, which a seek is about to scan: its
    /// entries lie one after another, each key in the line after the one before it, so a
    /// scan that waits for each line in turn pays a miss per entry (the hardware's prefetch
    /// starts only after a few); asked for together, the misses overlap. (Asking for the
    /// interval after it too, for the steps that follow a seek, measured slower: the extra
    /// lines compete with the ones the seek waits for.)
    fn prefetch_interval(&self, index: usize) {
        let data = self.block.bytes();
        let from = self.block.restart(index);
        let end = match index + 1 < self.block.num_restarts {
            true => self.block.restart(index + 1),
            false => self.block.restarts_at,
        };
        // At most the lines of 16 small entries: an interval of large values would ask for
        // many lines the scan skips (it reads each entry's header and key, not its value).
        let end = end
            .min(self.block.restarts_at)
            .min(from + PREFETCHED_INTERVAL_BYTES);
        for at in (from..end).step_by(64).chain(end.checked_sub(1)) {
            if let Some(byte) = data.get(at) {
                crate::util::prefetch(byte);
            }
        }
    }

    /// Asks for the lines of restart interval `index` up to offset `end`, and of the
    /// interval before it: a backward step decodes an interval from its restart point on,
    /// lines the cursor has not read yet (going backward, the previous interval's are cold
    /// when it gets there, and the hardware's own prefetch follows forward streams), so
    /// asking for both intervals at once lets their misses overlap.
    fn prefetch_backward_from(&self, index: usize, end: usize) {
        let data = self.block.bytes();
        let from = match index {
            0 => 0,
            i => self.block.restart(i - 1),
        };
        for at in (from..end.min(self.block.restarts_at)).step_by(64) {
            crate::util::prefetch(&data[at]);
        }
    }

    /// From a restart point (`seek_to_restart`), decodes entries up to the one that ends at
    /// `end` and stops on it, remembering the ones before it for `prev`. Each key is built
    /// once, in `prev_keys`, from the one before it there.
    fn scan_interval_to(&mut self, end: usize) {
        let data = self.block.bytes();
        let limit = self.block.restarts_at;
        // The previous key's start and length in `prev_keys` (none at the restart point).
        let (mut previous_start, mut previous_len) = (0, 0);
        loop {
            let at = self.next;
            if at >= limit {
                self.current = limit;
                return;
            }
            let Some((shared, unshared, vlen, kat)) = decode_entry(data, at, limit) else {
                return self.mark_corrupt("bad entry in block");
            };
            if shared > previous_len {
                return self.mark_corrupt("entry shares more bytes than the previous key has");
            }
            let start = self.prev_keys.len();
            self.prev_keys
                .extend_from_within(previous_start..previous_start + shared);
            self.prev_keys.extend_from_slice(&data[kat..kat + unshared]);
            self.current = at;
            self.value = (kat + unshared, vlen);
            self.next = kat + unshared + vlen;
            if self.next >= end {
                self.key_at = KeyAt::Remembered(start, self.prev_keys.len());
                return;
            }
            self.prev_entries.push(PrevEntry {
                current: at,
                next: self.next,
                value: self.value,
                key_end: self.prev_keys.len(),
            });
            (previous_start, previous_len) = (start, shared + unshared);
        }
    }

    fn forget_prev_entries(&mut self) {
        self.prev_entries.clear();
        self.prev_keys.clear();
    }

    /// Moves to the first entry with key >= `target`.
    ///
    /// A binary search of the restart points finds the interval, which is then scanned. In
    /// the built-in orders the scan compares entries against the target in place
    /// ([`BlockIter::scan_in_byte_order`]); an application's order builds each key and calls
    /// the comparator.
    pub fn seek(&mut self, target: &[u8]) {
        if self.corrupt.is_some() {
            return;
        }
        match &self.cmp {
            BlockOrder::Plain(KeyOrder::Bytewise) => {
                self.seek_in_byte_order::<false, false>(target)
            }
            BlockOrder::Plain(KeyOrder::Reverse) => self.seek_in_byte_order::<false, true>(target),
            BlockOrder::Internal(KeyOrder::Bytewise) => {
                self.seek_in_byte_order::<true, false>(target)
            }
            BlockOrder::Internal(KeyOrder::Reverse) => {
                self.seek_in_byte_order::<true, true>(target)
            }
            BlockOrder::Plain(KeyOrder::Custom(_)) | BlockOrder::Internal(KeyOrder::Custom(_)) => {
                let left = match self.restart_before(target, |a, b| self.cmp.compare(a, b)) {
                    Ok(left) => left,
                    Err(why) => return self.mark_corrupt(why),
                };
                self.prefetch_interval(left);
                self.seek_to_restart(left);
                while self.parse_next() {
                    if self.cmp.compare(self.key(), target) != Ordering::Less {
                        return;
                    }
                }
            }
        }
    }

    /// The last restart point whose key is before `target` in `compare` (the first if none
    /// is), by binary search, comparing the restart keys where they lie; the error says what
    /// is wrong with the block.
    #[inline(always)]
    pub(super) fn restart_before(
        &self,
        target: &[u8],
        compare: impl Fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<usize, &'static str> {
        let block = &*self.block;
        let data = block.bytes();
        let (entries, restarts) = data.split_at(block.restarts_at);
        let (mut left, mut right) = (0, block.num_restarts - 1);
        self.prefetch_restart_entries();
        while left < right {
            let mid = (left + right).div_ceil(2);
            let at = restarts
                .get(4 * mid..)
                .and_then(decode_fixed32)
                .unwrap_or_default() as usize;
            let (shared, unshared, _, kat) =
                decode_entry(entries, at, entries.len()).ok_or("bad entry at a restart point")?;
            if shared != 0 {
                return Err("restart entry shares a prefix");
            }
            if compare(&data[kat..kat + unshared], target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        Ok(left)
    }

    /// [`BlockIter::restart_before`] in a built-in order by the block's restart words
    /// (`words`, one per restart point): a probe reads the restart key only when its word
    /// equals the target's.
    ///
    /// The sampled words ([`RestartWords::groups`]) narrow the search first: a restart point
    /// whose word orders before the target's has a key before the target (the answer is at or
    /// after it), one whose word orders after it has a key after the target (the answer is
    /// before it); equal words decide nothing, and leave the range wider.
    pub(super) fn restart_before_by_words<const INTERNAL: bool, const REVERSE: bool>(
        &self,
        target: &[u8],
        restart_words: &RestartWords,
    ) -> Result<usize, &'static str> {
        let trailer_len = if INTERNAL { TRAILER_LEN } else { 0 };
        let target_word = first_word(&target[..target.len().saturating_sub(trailer_len)]);
        // The word's key against the target's, where the words alone say it.
        let word_order = |w: u64| match (w.cmp(&target_word), REVERSE) {
            (Ordering::Equal, _) => Ordering::Equal,
            (o, false) => o,
            (o, true) => o.reverse(),
        };
        let (words, groups) = (&*restart_words.words, &*restart_words.groups);
        let block = &*self.block;
        let data = block.bytes();
        // Groups whose first key is surely before the target, then those not surely after.
        let before = groups.partition_point(|&w| word_order(w) == Ordering::Less);
        let not_after = before
            + groups[before..]
                .iter()
                .take_while(|&&w| word_order(w) == Ordering::Equal)
                .count();
        let mut left = before.saturating_sub(1) * WORDS_PER_GROUP;
        let mut right = match not_after < groups.len() {
            true => (not_after * WORDS_PER_GROUP).saturating_sub(1),
            false => words.len().saturating_sub(1),
        };
        while left < right {
            let mid = (left + right).div_ceil(2);
            let order = match words.get(mid).map(|&w| word_order(w)) {
                Some(Ordering::Less) => Ordering::Less,
                Some(Ordering::Greater) => Ordering::Greater,
                Some(Ordering::Equal) | None => {
                    let (shared, unshared, _, kat) =
                        decode_entry(data, block.restart(mid), block.restarts_at)
                            .ok_or("bad entry at a restart point")?;
                    if shared != 0 {
                        return Err("restart entry shares a prefix");
                    }
                    compare_in_byte_order::<INTERNAL, REVERSE>(&data[kat..kat + unshared], target)
                }
            };
            if order == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        Ok(left)
    }

    /// [`BlockIter::seek`] in a built-in order (see [`compare_in_byte_order`]).
    fn seek_in_byte_order<const INTERNAL: bool, const REVERSE: bool>(&mut self, target: &[u8]) {
        let trailer_len = if INTERNAL { TRAILER_LEN } else { 0 };
        let left = match self.block.restart_words(trailer_len) {
            Some(words) => self.restart_before_by_words::<INTERNAL, REVERSE>(target, words),
            None => self.restart_before(target, compare_in_byte_order::<INTERNAL, REVERSE>),
        };
        match left {
            Ok(left) => self.seek_from_restart::<INTERNAL, REVERSE>(left, target),
            Err(why) => self.mark_corrupt(why),
        }
    }

    /// Moves to the first entry at or after `target` from restart point `left` on, in a
    /// built-in order.
    fn seek_from_restart<const INTERNAL: bool, const REVERSE: bool>(
        &mut self,
        left: usize,
        target: &[u8],
    ) {
        self.prefetch_interval(left);
        self.seek_to_restart(left);
        if self.corrupt.is_some() {
            return;
        }
        match self.scan_in_byte_order::<INTERNAL, REVERSE>(target) {
            Ok(Scan::Done) => {}
            Ok(Scan::Rescan) => {
                self.seek_to_restart(left);
                while self.parse_next() {
                    let order = compare_in_byte_order::<INTERNAL, REVERSE>(self.key(), target);
                    if order != Ordering::Less {
                        return;
                    }
                }
            }
            Err(why) => self.mark_corrupt(why),
        }
    }

    /// A point lookup's seek: moves to the first entry at or after `target` when the block
    /// holds an entry of `target`'s user key there; otherwise to an entry of another user
    /// key or past the last entry (the caller checks the user key it finds, and a table
    /// never needs the next block then: `data_block_hash.rs`).
    ///
    /// A block with a hash index, read in a built-in order of internal keys, gives the
    /// restart interval of the target's user key by its bucket: a scan from there replaces
    /// the binary search, and an empty bucket ends the lookup at once. A collision, a block
    /// without a hash index, or another order seek as [`BlockIter::seek`] does.
    pub fn seek_for_get(&mut self, target: &[u8]) {
        self.seek_for_get_hashed(target, None);
    }

    /// [`BlockIter::seek_for_get`] given `user_key_hash`, the [`filter_hash`] of `target`'s
    /// user key when the caller has it (a table lookup computed it for the filters), so
    /// that a block's hash index does not compute it again.
    ///
    /// [`filter_hash`]: crate::key::filter_hash
    pub fn seek_for_get_hashed(&mut self, target: &[u8], user_key_hash: Option<u64>) {
        if self.corrupt.is_some() {
            return;
        }
        match &self.cmp {
            BlockOrder::Internal(KeyOrder::Bytewise) if self.block.has_hash_index() => {
                self.seek_by_hash::<false>(target, user_key_hash)
            }
            BlockOrder::Internal(KeyOrder::Reverse) if self.block.has_hash_index() => {
                self.seek_by_hash::<true>(target, user_key_hash)
            }
            _ => self.seek(target),
        }
    }

    /// [`BlockIter::seek_for_get`] through the block's hash index.
    fn seek_by_hash<const REVERSE: bool>(&mut self, target: &[u8], user_key_hash: Option<u64>) {
        let user_key = &target[..target.len().saturating_sub(TRAILER_LEN)];
        let hash = user_key_hash.unwrap_or_else(|| crate::key::filter_hash(user_key));
        match self.block.hash_bucket(hash) {
            None | Some(COLLISION) => self.seek_in_byte_order::<true, REVERSE>(target),
            Some(EMPTY) => {
                self.forget_prev_entries();
                self.key_at = KeyAt::Built;
                self.key.clear();
                self.current = self.block.restarts_at;
                self.next = self.block.restarts_at;
            }
            Some(r) if usize::from(r) >= self.block.num_restarts => self.mark_corrupt(&format!(
                "hash index bucket names restart point {r} of a block of {}",
                self.block.num_restarts
            )),
            Some(r) => self.seek_from_restart::<true, REVERSE>(usize::from(r), target),
        }
    }

    /// From the restart point at `self.next`, moves to the first entry at or after `target`
    /// in the built-in order given by `INTERNAL` and `REVERSE`, building only that entry's
    /// key.
    ///
    /// An entry's key is the previous key's first `shared` bytes, then its own bytes. The
    /// scan keeps `lcp`, the number of bytes the previous key has in common with the target,
    /// and `apart`: the previous key is before the target and differs from it at byte `lcp`,
    /// inside both user keys (so that byte decides their order). Then an entry that
    /// - shares more than `lcp` bytes has the previous key's byte at `lcp`: when that byte is
    ///   inside its user key it is before the target too, and none of its bytes is read;
    /// - shares at most `lcp` bytes is the target's first `shared` bytes followed by its own:
    ///   it is compared where it lies, from byte `shared` on, and its byte where it leaves
    ///   the target decides, when inside both user keys;
    /// - is neither (the previous key's user key is a prefix of the target's, or they are the
    ///   same user key: a key's older versions) is built in `key` and compared whole; `key`
    ///   holds the previous key whenever it is not `apart`.
    fn scan_in_byte_order<const INTERNAL: bool, const REVERSE: bool>(
        &mut self,
        target: &[u8],
    ) -> Result<Scan, &'static str> {
        let user_len = |len: usize| match INTERNAL {
            true => len.saturating_sub(TRAILER_LEN),
            false => len,
        };
        let target_user = user_len(target.len());
        let limit = self.block.restarts_at;
        let data = self.block.bytes();
        let mut at = self.next;
        // At the restart point the previous key is the empty one, built in `key`.
        let (mut lcp, mut apart, mut previous_len) = (0, false, 0);
        while at < limit {
            let (shared, unshared, vlen, kat) =
                decode_entry(data, at, limit).ok_or("bad entry in block")?;
            if shared > previous_len {
                return Err("entry shares more bytes than the previous key has");
            }
            let own = &data[kat..kat + unshared];
            let len = shared + unshared;
            let mut built = false;
            let order = if shared > lcp {
                if apart {
                    if lcp >= user_len(len) {
                        return Ok(Scan::Rescan);
                    }
                    Ordering::Less
                } else {
                    self.key.truncate(shared);
                    self.key.extend(own);
                    built = true;
                    // The entry has the previous key's byte at `lcp` (or the target ends
                    // there): `lcp` is its common prefix with the target too.
                    let order =
                        compare_in_byte_order::<INTERNAL, REVERSE>(self.key.as_slice(), target);
                    apart = order == Ordering::Less && lcp < user_len(len) && lcp < target_user;
                    order
                }
            } else {
                // Mostly the entry leaves the target at its first own byte (keys next to
                // each other share as much of the target as of each other).
                lcp = shared
                    + match (own.first(), target.get(shared)) {
                        (Some(a), Some(b)) if a != b => 0,
                        _ => common_prefix_len(own, &target[shared..]),
                    };
                if lcp < user_len(len) && lcp < target_user {
                    apart = true;
                    match (own[lcp - shared] < target[lcp]) != REVERSE {
                        true => Ordering::Less,
                        false => Ordering::Greater,
                    }
                } else {
                    self.key.clear();
                    self.key.extend(&target[..shared]);
                    self.key.extend(own);
                    built = true;
                    apart = false;
                    compare_in_byte_order::<INTERNAL, REVERSE>(self.key.as_slice(), target)
                }
            };
            let next = kat + unshared + vlen;
            if order == Ordering::Less {
                previous_len = len;
                at = next;
                continue;
            }
            self.current = at;
            self.next = next;
            self.value = (kat + unshared, vlen);
            self.key_at = KeyAt::Built;
            if shared == 0 {
                self.key_at = KeyAt::Block(kat, kat + unshared);
            } else if !built {
                self.key.clear();
                self.key.extend(&target[..shared]);
                self.key.extend(own);
            }
            return Ok(Scan::Done);
        }
        self.current = limit;
        self.next = limit;
        Ok(Scan::Done)
    }

    /// Moves to the last entry with key <= `target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if !self.valid() {
            if self.corrupt.is_none() {
                self.seek_to_last();
            }
            return;
        }
        if self.cmp.compare(self.key(), target) == Ordering::Greater {
            self.prev();
        }
    }

    /// Moves to the next entry.
    #[inline]
    pub fn next(&mut self) {
        if self.valid() {
            // The current key may be a remembered one, which the next entry's prefix is
            // taken from: forgotten only after.
            self.parse_next();
            self.forget_prev_entries();
        }
    }

    /// Moves to the previous entry (invalid before the first).
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let original = self.current;
        if let Some(e) = self.prev_entries.pop() {
            if e.next == original {
                // Its key stays where the scan built it (the keys after it are not needed).
                let key_start = self.prev_entries.last().map_or(0, |p| p.key_end);
                self.key_at = KeyAt::Remembered(key_start, e.key_end);
                self.current = e.current;
                self.next = e.next;
                self.value = e.value;
                return;
            }
        }
        // The last restart point strictly before the current entry, by binary search: a
        // forward step then need not track which interval it is in. (`before` counts the
        // restart points found before it; one counted was checked to be.)
        let (mut before, mut after) = (0, self.block.num_restarts);
        while before < after {
            let mid = (before + after) / 2;
            if self.block.restart(mid) < original {
                before = mid + 1;
            } else {
                after = mid;
            }
        }
        if before == 0 {
            self.current = self.block.restarts_at;
            self.next = self.block.restarts_at;
            return;
        }
        self.prefetch_backward_from(before - 1, original);
        self.seek_to_restart(before - 1);
        self.scan_interval_to(original);
    }
}

/// The current key of a cursor: in the block's bytes, or built in `built`.
#[inline]
fn current_key<'a>(block: &'a Block, at: KeyAt, built: &'a [u8], remembered: &'a [u8]) -> &'a [u8] {
    match at {
        KeyAt::Block(start, end) => block.bytes().get(start..end).unwrap_or_default(),
        KeyAt::Remembered(start, end) => remembered.get(start..end).unwrap_or_default(),
        KeyAt::Built => built,
    }
}
