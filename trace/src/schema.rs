//! The SQLite schema (`sql/schema.sql`, `sql/indexes.sql`); [`crate::db_writer`] fills it.

use rusqlite::Connection;

/// The DDL of every table and view.
pub const SCHEMA_SQL: &str = include_str!("../sql/schema.sql");
/// Indexes, created after the rows are in.
pub const INDEXES_SQL: &str = include_str!("../sql/indexes.sql");

/// Creates the tables and views in an empty database.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA_SQL)
}
