//! Where the tests find the third-party trace corpus, which the project never commits.
//!
//! It lives in `../shared/corpus/` beside the checkout (origins and licences in its
//! `README.md`); `SUPERPASS_CORPUS` names another place. A test whose folder is absent skips
//! and says so on the terminal. When `SUPERPASS_CORPUS` is set (`cargo xtask ci` sets it
//! whenever the corpus is there) a missing folder fails instead, so CI cannot skip silently.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable that names the corpus root and makes its absence an error.
pub const ENV: &str = "SUPERPASS_CORPUS";

/// `<corpus>/<sub>` if it is a directory; otherwise `None` after printing that `test` skipped,
/// or a panic when [`ENV`] says the corpus must be there.
pub fn folder(sub: &str, test: &str) -> Option<PathBuf> {
    let (root, required) = match std::env::var_os(ENV) {
        Some(r) => (PathBuf::from(r), true),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
            false,
        ),
    };
    let dir = root.join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        !required,
        "{test}: corpus folder {} is absent, but {ENV} says the corpus is at {}",
        dir.display(),
        root.display()
    );
    // Written to the terminal directly: the test harness hides `eprintln!` of passing tests.
    let _ = writeln!(
        std::io::stderr(),
        "SKIP {test}: corpus folder {} is absent (third-party traces are kept outside the \
         project; set {ENV} to their folder)",
        dir.display()
    );
    None
}

/// The bytes of `file` in `dir`, with the path in any error.
pub fn read(dir: &Path, file: &str) -> Vec<u8> {
    let p = dir.join(file);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The bytes of `<corpus>/<sub>/<file>`, or `None` after saying that `test` skipped (as
/// [`folder`]).
pub fn file(sub: &str, file: &str, test: &str) -> Option<Vec<u8>> {
    folder(sub, test).map(|dir| read(&dir, file))
}
