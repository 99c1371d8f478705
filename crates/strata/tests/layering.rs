//! The modules of the crate form layers that import one way: a module may use modules of
//! lower layers, never of its own layer or above. This test reads every `crate::` path in the
//! sources (test modules and comments aside) and fails on an import against the order below,
//! the one copy of it (`src/lib.rs` and `docs/design.md` point here). To add a module, give it a layer here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layers, lowest first; modules on one line are independent of each other. This is the one
/// copy of the order: `src/lib.rs` and `docs/design.md` point here.
const LAYERS: &[&[&str]] = &[
    // Helpers, integer and varint coding, checksums, `Error`; user key orders (`Comparator`,
    // `KeyOrder`); statistics counters striped over threads; the thread's per-operation
    // statistics (`PerfContext`); latency histograms.
    &[
        "util",
        "codec",
        "error",
        "comparator",
        "counter",
        "perf_context",
        "histogram",
    ],
    // The file-system trait, POSIX, fault injection, IO accounting.
    &["fs"],
    // Internal keys and sequence numbers; the names of the files; prefix extractors; the
    // compression of a block or a log record.
    &["key", "filename", "prefix", "compression"],
    // Record framing of the WAL and the manifest; the sharded clock cache; merge operators
    // and the resolution of operands; compaction filters, the TTL value layout and clock;
    // range tombstones (fragmenting, queries, the memtable's list); the `EventListener`
    // trait and its event records.
    &[
        "log",
        "cache",
        "rate_limiter",
        "write_buffer_manager",
        "merge",
        "compaction_filter",
        "range_del",
        "listener",
    ],
    // Internal iterators: merging, concatenating.
    &["iterator"],
    // Column family handles (id, name, dropped flag).
    &["column_family"],
    // Batches and their limits; snapshot handles.
    &["write_batch", "snapshot"],
    // The skiplist memtable; blocks, filters, the table builder and reader.
    &["memtable", "table"],
    // Blob files: values kept apart from the tree, by reference (format, writer, reader).
    &["blob"],
    // Versions, version edits, the manifest.
    &["version"],
    // Pickers (pure), visibility rules, compaction styles.
    &["compaction"],
    // `Options`, `CfOptions`, `ReadOptions`, `WriteOptions`.
    &["options"],
    // The database (open, write path, read path, flush, compaction jobs, ingest, stats); tables
    // built outside a database, for ingest.
    &["db", "sst_writer"],
    // Indexed batches, optimistic and pessimistic transactions, locks, two-phase commit,
    // updatable cursors; incremental backups.
    &["txn", "backup"],
    // What the tools and fuzz targets may reach (hidden); test-only harnesses (iterator
    // conformance, declared trees).
    &["internals", "testing"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            // A `tests.rs` is a test module moved out of the file beside it: test code, as
            // the `#[cfg(test)]` modules left inside files are.
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/db/compact.rs` -> `db`), or `None`
/// for the crate root.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib").then_some(name)
}

/// The code of a file without comments and `#[cfg(test)]` modules.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|(_, next)| next.trim_start().starts_with("mod "))
        {
            // Skip the module: up to the closing brace at its indentation.
            let indent = line.len() - trimmed.len();
            let close = format!("{}}}", " ".repeat(indent));
            for (_, l) in lines.by_ref() {
                if l == close {
                    break;
                }
            }
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push((n + 1, line.to_string()));
    }
    out
}

/// The crate-root names re-exported by lib.rs (`pub use db::{Db, ...}`), by the module that
/// defines them, so that `crate::Db` counts as a use of `db`.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let flat = lib.replace('\n', " ");
    for stmt in flat.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        let names = names.trim_matches(|c| c == '{' || c == '}' || c == ' ');
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    map
}

/// The modules a line refers to through `crate::`.
fn crate_refs(line: &str, root: &BTreeMap<String, String>) -> Vec<String> {
    let mut refs = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name == "{" || name.is_empty() {
            // `use crate::{a, b}`: every name in the braces.
            let group: String = rest.chars().skip(1).take_while(|&c| c != '}').collect();
            for item in group.split(',') {
                let first = item.trim().split("::").next().unwrap_or("").trim();
                if !first.is_empty() {
                    refs.push(root.get(first).cloned().unwrap_or(first.to_string()));
                }
            }
        } else {
            refs.push(root.get(&name).cloned().unwrap_or(name));
        }
    }
    refs
}

/// Every import against the layer order, as `file:line: from -> to`.
fn violations(src: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let root = root_reexports(&lib);
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let Some(module) = module_of(src, file) else {
            continue;
        };
        let from = layer_of(&module)
            .unwrap_or_else(|| panic!("module {module} has no layer in tests/layering.rs"));
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in code_lines(&text) {
            for to in crate_refs(&line, &root) {
                if to == module {
                    continue;
                }
                let Some(to_layer) = layer_of(&to) else {
                    found.push(format!(
                        "{}:{n}: {module} -> unknown module {to}",
                        file.display()
                    ));
                    continue;
                };
                if to_layer >= from {
                    found.push(format!(
                        "{}:{n}: {module} (layer {from}) imports {to} (layer {to_layer})",
                        file.display()
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn modules_import_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "imports against the layer order:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines() {
        let line = line.trim();
        if let Some(rest) = line
            .split("mod ")
            .nth(1)
            .filter(|_| !line.starts_with("//"))
        {
            let name = rest.trim_end_matches(';').trim();
            if line.ends_with(';') && !line.contains("cfg(test)") {
                assert!(layer_of(name).is_some(), "module {name} has no layer");
            }
        }
    }
}

#[test]
fn the_checker_sees_each_kind_of_reference() {
    let root: BTreeMap<String, String> = [("Db".to_string(), "db".to_string())].into();
    let cases: &[(&str, &[&str])] = &[
        ("use crate::key::ParsedKey;", &["key"]),
        ("use crate::{db::Db, key};", &["db", "key"]),
        ("let x = crate::table::filter::filter_hash(k);", &["table"]),
        ("fn f(db: &crate::Db) {}", &["db"]),
        ("let s = \"no reference here\";", &[]),
    ];
    for (line, want) in cases {
        assert_eq!(crate_refs(line, &root), *want, "{line}");
    }
    let text = "use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\nuse crate::d;\n";
    let kept: Vec<String> = code_lines(text).into_iter().map(|(_, l)| l).collect();
    assert_eq!(kept, ["use crate::a;", "use crate::d;"]);
}
