use super::*;
use crate::key::{append_internal_key, ValueKind};
use crate::testing::harness::{self, Constructor, Entries, Keys};
use crate::testing::lsm::{self, Caching, RunFile, VecIter};
use crate::util::Rng;
use std::path::PathBuf;
use std::sync::Arc;

/// Builds iterators over parts of a data set: sorted vectors, memtables, tables, and
/// sorted runs of files (each a table or in memory).
struct Parts {
    dir: tempfile::TempDir,
    files: u64,
}

impl Parts {
    fn new() -> Parts {
        Parts {
            dir: tempfile::tempdir().unwrap(),
            files: 0,
        }
    }

    fn path(&mut self) -> PathBuf {
        self.files += 1;
        self.dir.path().join(format!("{}.sst", self.files))
    }

    /// `entries` as a sorted run split into files at random points.
    fn run(&mut self, entries: &Entries, rng: &mut Rng) -> ConcatIterator<Arc<RunFile>> {
        let file_len = 1 + rng.below(60);
        let mut files = Vec::new();
        let mut rest = entries;
        while !rest.is_empty() {
            let (file, tail) =
                rest.split_at(1 + rng.below(file_len).min(rest.len() as u64 - 1) as usize);
            let path = rng.one_in(2).then(|| self.path());
            files.push(RunFile::new(file.to_vec(), path.as_deref()));
            rest = tail;
        }
        lsm::concat(files)
    }

    /// An iterator of a random kind over `entries`.
    fn any(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator> {
        match rng.below(4) {
            0 => Box::new(VecIter::new(entries.to_vec())),
            1 => Box::new(lsm::memtable(entries, rng, 1 << 16).iter()),
            2 => {
                let path = self.path();
                let options = lsm::internal_table_options();
                Box::new(lsm::table(&path, entries, options, Caching::Data).iter())
            }
            _ => Box::new(self.run(entries, rng)),
        }
    }
}

/// A merge of up to `max_children` children of every kind, each holding a random part of
/// the data set.
struct MergingConstructor {
    parts: Parts,
    max_children: u64,
}

impl Constructor for MergingConstructor {
    fn name(&self) -> String {
        format!("merging iterator (up to {} children)", self.max_children)
    }
    fn keys(&self) -> Keys {
        Keys::Internal
    }
    fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
        let mut parts = vec![Vec::new(); 1 + rng.below(self.max_children) as usize];
        let n = parts.len() as u64;
        for e in entries {
            parts[rng.below(n) as usize].push(e.clone());
        }
        let children = parts.iter().map(|p| self.parts.any(p, rng)).collect();
        Box::new(MergingIterator::new(children))
    }
}

/// A sorted run of files (tables and files in memory), concatenated.
struct ConcatConstructor {
    parts: Parts,
}

impl Constructor for ConcatConstructor {
    fn name(&self) -> String {
        "concatenating iterator".into()
    }
    fn keys(&self) -> Keys {
        Keys::Internal
    }
    fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
        Box::new(self.parts.run(entries, rng))
    }
}

#[test]
fn merging_iterators_pass_the_iterator_harness() {
    for max_children in [1, 3, 8] {
        let mut c = MergingConstructor {
            parts: Parts::new(),
            max_children,
        };
        harness::check(&mut c, 16);
    }
}

#[test]
fn concatenating_iterators_pass_the_iterator_harness() {
    harness::check(
        &mut ConcatConstructor {
            parts: Parts::new(),
        },
        16,
    );
}

/// A filtered source over a few keys, its hint armed or not, its filter saying yes or
/// no: a seek, prepared or not, finds the keys unless the armed filter says no.
#[test]
fn a_filtered_seek_skips_the_source_only_when_the_armed_filter_says_no() {
    // (armed, the filter's verdict, seek prepared first, valid after the seek)
    let cases = [
        (false, false, false, true),
        (false, false, true, true),
        (true, true, false, true),
        (true, true, true, true),
        (true, false, false, false),
        (true, false, true, false),
    ];
    for (armed, verdict, prepared, valid) in cases {
        let entries: Vec<(Vec<u8>, Vec<u8>)> =
            (0..4).map(|i| (ikey(i, 1), b"v".to_vec())).collect();
        let hint = Arc::new(SeekHint::default());
        let may_match: MayMatch = Box::new(move |_, _, _| Ok(verdict));
        let mut it = FilteredSeek::new(Box::new(VecIter::new(entries)), hint.clone(), may_match);
        if armed {
            hint.arm(7);
        }
        let target = ikey(2, 1);
        if prepared {
            it.prepare_seek(&target);
        }
        it.seek(&target);
        let case = format!("armed {armed}, filter {verdict}, prepared {prepared}");
        assert_eq!(it.valid(), valid, "{case}");
        if valid {
            assert_eq!(it.key(), &target[..], "{case}");
        }
        // A preparation does not outlive its seek: disarmed, the next seek reads.
        hint.disarm();
        it.seek(&ikey(1, 1));
        assert!(it.valid(), "{case}: the disarmed seek after");
    }
}

fn ikey(n: u64, seq: u64) -> Vec<u8> {
    let mut k = Vec::new();
    append_internal_key(
        &mut k,
        format!("k{n:04}").as_bytes(),
        seq,
        ValueKind::Put as u8,
    );
    k
}

#[test]
fn a_file_that_cannot_be_opened_ends_the_walk_with_its_error() {
    let files: Vec<Arc<RunFile>> = (1..=3u64)
        .map(|n| {
            let entries = (0..6).map(|i| (ikey(n * 10 + i, 1), b"v".to_vec()));
            RunFile::new(entries.collect(), None)
        })
        .collect();
    let mut it = ConcatIterator::new(
        files,
        Box::new(|f: &Arc<RunFile>| {
            if f.smallest() == ikey(20, 1) {
                return Err(crate::error::Error::Corruption {
                    file: "000002.sst".into(),
                    offset: 0,
                    reason: "bad".into(),
                });
            }
            Ok(f.open())
        }),
    );
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        seen += 1;
        it.next();
    }
    assert_eq!(seen, 6, "the first file, then the error");
    let err = it.status().unwrap_err();
    assert!(err.to_string().contains("000002.sst"), "{err}");
}
