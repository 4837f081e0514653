//! Runs SQL text (several statements, as in a `.sql` file) and returns the last rows.

use rusqlite::types::Value;
use rusqlite::Connection;

/// Column names and rows of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of values.
    pub rows: Vec<Vec<Value>>,
}

impl Rows {
    /// Renders as tab-separated text with a header line.
    pub fn to_tsv(&self) -> String {
        let mut out = self.columns.join("\t");
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(cell).collect();
            out.push_str(&cells.join("\t"));
            out.push('\n');
        }
        out
    }

    /// The index of column `name`.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_owned(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(t) => t.clone(),
        Value::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

/// Splits SQL text into statements at `;` outside quotes and comments, dropping empty ones.
pub fn statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b';' => {
                out.push(&sql[start..=i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&sql[start..]);
    out.into_iter().filter(|s| has_code(s)).collect()
}

/// Whether a statement has anything but whitespace, `--` comments and `;`.
fn has_code(s: &str) -> bool {
    s.lines()
        .map(|l| l.split("--").next().unwrap_or(""))
        .any(|l| !l.trim().trim_matches(';').trim().is_empty())
}

/// Runs every statement in `sql`; returns the rows of the last one.
pub fn run(conn: &Connection, sql: &str) -> rusqlite::Result<Rows> {
    let mut last = Rows {
        columns: Vec::new(),
        rows: Vec::new(),
    };
    for stmt in statements(sql) {
        let mut st = conn.prepare(stmt)?;
        let columns: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
        let n = columns.len();
        let rows = st
            .query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?
            .collect::<rusqlite::Result<Vec<Vec<Value>>>>()?;
        last = Rows { columns, rows };
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_statements() {
        let s = statements("-- c; x\nSELECT ';'; SELECT 2 -- tail;\n;\n-- only\n");
        assert_eq!(s, vec!["-- c; x\nSELECT ';';", " SELECT 2 -- tail;\n;"]);
    }

    #[test]
    fn runs_last_statement() {
        let c = Connection::open_in_memory().unwrap();
        let r = run(
            &c,
            "CREATE TABLE t(a); INSERT INTO t VALUES (1),(2); SELECT SUM(a) AS s FROM t;",
        )
        .unwrap();
        assert_eq!(r.columns, vec!["s"]);
        assert_eq!(r.rows, vec![vec![Value::Integer(3)]]);
    }
}
