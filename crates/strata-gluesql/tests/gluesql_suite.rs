//! GlueSQL's own test suite (the `gluesql-test-suite` crate) run against `StrataStorage`:
//! every group of cases whose traits this storage implements. README.md names the groups left
//! out and why.

use gluesql_core::prelude::Glue;
use gluesql_test_suite::*;
use strata_gluesql::StrataStorage;

struct StrataTester {
    glue: Glue<StrataStorage>,
    // Dropped after the storage: the database lives in it.
    _dir: tempfile::TempDir,
}

impl Tester<StrataStorage> for StrataTester {
    fn new(namespace: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(namespace)
            .tempdir()
            .expect("a temporary directory");
        let storage = StrataStorage::open(dir.path()).expect("open the database");
        StrataTester {
            glue: Glue::new(storage),
            _dir: dir,
        }
    }

    fn get_glue(&mut self) -> &mut Glue<StrataStorage> {
        &mut self.glue
    }
}

generate_store_tests!(test, StrataTester);
generate_index_tests!(test, StrataTester);
generate_transaction_tests!(test, StrataTester);
generate_alter_table_tests!(test, StrataTester);
generate_alter_table_index_tests!(test, StrataTester);
generate_transaction_alter_table_tests!(test, StrataTester);
generate_transaction_index_tests!(test, StrataTester);
generate_metadata_table_tests!(test, StrataTester);
generate_metadata_index_tests!(test, StrataTester);
generate_custom_function_tests!(test, StrataTester);
