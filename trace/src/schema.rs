//! Creates the SQLite schema (`sql/schema.sql`) and writes a [`Model`] into it: with SQL
//! INSERTs ([`write()`]), or as a database image whose big tables are b-tree pages built
//! directly ([`image`]).

use rusqlite::{params, Connection, OptionalExtension, Statement, MAIN_DB};

use crate::btree::{compare_keys, encode_record, Image, Sink, Tree, TreeWriter, Unsupported, Val};

use crate::model::{Model, SpRow, StateRow, TrackKind};

/// The DDL of every table and view.
pub const SCHEMA_SQL: &str = include_str!("../sql/schema.sql");
/// Indexes, created after the rows are in.
pub const INDEXES_SQL: &str = include_str!("../sql/indexes.sql");

/// Creates the tables and views in an empty database.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA_SQL)
}

/// Formats `v` as `0x...` hex into `buf` (no allocation); returns the text.
fn hex(v: u64, buf: &mut [u8; 18]) -> &str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digits = ((64 - v.leading_zeros()) as usize).div_ceil(4).max(1);
    buf[0] = b'0';
    buf[1] = b'x';
    for i in 0..digits {
        buf[1 + digits - i] = DIGITS[((v >> (4 * i)) & 0xf) as usize];
    }
    std::str::from_utf8(&buf[..2 + digits]).expect("ASCII hex")
}

/// Rows per multi-row `INSERT ... VALUES (...), (...)` statement: one `sqlite3_step` and
/// reset per batch instead of per row.
const BATCH: usize = 64;

/// Inserts `rows` with `INSERT INTO {head} VALUES` and `cols` parameters per row, `BATCH`
/// rows per statement, through cached statements and raw binding (no per-row allocation).
/// `bind(st, first, row)` binds one row's parameters starting at index `first`.
fn insert_all<T>(
    conn: &Connection,
    head: &str,
    cols: usize,
    rows: impl ExactSizeIterator<Item = T>,
    mut bind: impl FnMut(&mut Statement<'_>, usize, T) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let sql = |n: usize| {
        let one = format!("({})", vec!["?"; cols].join(","));
        format!("INSERT INTO {head} VALUES {}", vec![one; n].join(","))
    };
    let total = rows.len();
    let mut rows = rows;
    let full = total / BATCH;
    if full > 0 {
        let mut st = conn.prepare_cached(&sql(BATCH))?;
        for _ in 0..full {
            for j in 0..BATCH {
                let r = rows.next().expect("ExactSizeIterator length");
                bind(&mut st, j * cols + 1, r)?;
            }
            st.raw_execute()?;
        }
    }
    let rest = total % BATCH;
    if rest > 0 {
        let mut st = conn.prepare(&sql(rest))?;
        for j in 0..rest {
            let r = rows.next().expect("ExactSizeIterator length");
            bind(&mut st, j * cols + 1, r)?;
        }
        st.raw_execute()?;
    }
    Ok(())
}

/// `rows` with their row numbers, in (utid, ts, id) order. Rows arrive in time order, so a
/// stable counting sort by utid is enough; a final check falls back to a full sort
/// otherwise. The rows are copied: the counting sort writes one sequential stream per
/// thread, and the writers then read the result sequentially (reading the rows in place
/// through an index instead misses the cache on nearly every row).
fn by_utid_ts(rows: &[StateRow]) -> Vec<(u32, StateRow)> {
    let threads = rows.iter().map(|s| s.utid as usize + 1).max().unwrap_or(0);
    let mut start = vec![0usize; threads + 1];
    for s in rows {
        start[s.utid as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut out: Vec<(u32, StateRow)> = match rows.first() {
        Some(&first) => vec![(0, first); rows.len()],
        None => return Vec::new(),
    };
    for (i, s) in rows.iter().enumerate() {
        let slot = &mut start[s.utid as usize];
        out[*slot] = (i as u32, *s);
        *slot += 1;
    }
    let key = |(i, s): &(u32, StateRow)| (s.utid, s.ts, *i);
    if out.windows(2).any(|w| key(&w[0]) > key(&w[1])) {
        out.sort_unstable_by_key(key);
    }
    out
}

/// Columns of `slice` the importer fills, in the order of [`slice_rows`].
const SLICE_COLS: [&str; 8] = [
    "id",
    "ts",
    "dur",
    "track_id",
    "category",
    "name",
    "depth",
    "parent_id",
];
/// Columns of `counter` the importer fills.
const COUNTER_COLS: [&str; 4] = ["id", "ts", "track_id", "value"];
/// Columns of `sched` the importer fills.
const SCHED_COLS: [&str; 7] = ["id", "ts", "dur", "cpu", "utid", "end_state", "priority"];
/// Columns of `thread_state` the importer fills.
const THREAD_STATE_COLS: [&str; 9] = [
    "id",
    "ts",
    "dur",
    "cpu",
    "utid",
    "state",
    "io_wait",
    "blocked_function",
    "waker_utid",
];

fn opt_int(v: Option<impl Into<i64>>) -> Val<'static> {
    v.map_or(Val::Null, |v| Val::Int(v.into()))
}

fn opt_text(s: Option<&str>) -> Val<'_> {
    s.map_or(Val::Null, Val::Text)
}

// The big tables' rows, shared by both writers so that they store the same values.

fn slice_rows(m: &Model) -> impl ExactSizeIterator<Item = [Val<'_>; 8]> + '_ {
    m.slices.iter().map(move |s| {
        [
            Val::Int(s.id.into()),
            Val::Int(s.ts),
            Val::Int(s.dur),
            Val::Int(s.track_id.into()),
            opt_text(s.cat.map(|c| m.str(c))),
            Val::Text(m.str(s.name)),
            Val::Int(s.depth.into()),
            opt_int(s.parent_id),
        ]
    })
}

fn counter_rows(m: &Model) -> impl ExactSizeIterator<Item = [Val<'_>; 4]> + '_ {
    m.counters.iter().enumerate().map(|(id, c)| {
        [
            Val::Int(id as i64),
            Val::Int(c.ts),
            Val::Int(c.track_id.into()),
            Val::Real(c.value),
        ]
    })
}

fn sched_rows(m: &Model) -> impl ExactSizeIterator<Item = [Val<'_>; 7]> + '_ {
    m.sched.iter().enumerate().map(move |(id, s)| {
        [
            Val::Int(id as i64),
            Val::Int(s.ts),
            Val::Int(s.dur),
            Val::Int(s.cpu.into()),
            Val::Int(s.utid.into()),
            opt_text(s.end_state.map(|e| m.str(e))),
            Val::Int(s.priority.into()),
        ]
    })
}

/// `order` is [`by_utid_ts`] of `m.thread_state`.
fn thread_state_rows<'a: 'o, 'o>(
    m: &'a Model,
    order: &'o [(u32, StateRow)],
) -> impl ExactSizeIterator<Item = [Val<'a>; 9]> + 'o {
    order.iter().map(move |&(id, ref s)| {
        [
            Val::Int(id.into()),
            Val::Int(s.ts),
            Val::Int(s.dur),
            opt_int(s.cpu),
            Val::Int(s.utid.into()),
            Val::Text(m.str(s.state)),
            opt_int(s.io_wait),
            opt_text(s.blocked_function.map(|f| m.str(f))),
            opt_int(s.waker_utid),
        ]
    })
}

fn bind_val(st: &mut Statement<'_>, i: usize, v: Val<'_>) -> rusqlite::Result<()> {
    match v {
        Val::Null => st.raw_bind_parameter(i, rusqlite::types::Null),
        Val::Int(x) => st.raw_bind_parameter(i, x),
        Val::Real(x) => st.raw_bind_parameter(i, x),
        Val::Text(x) => st.raw_bind_parameter(i, x),
    }
}

/// Inserts rows of `N` values into `table (cols...)` with [`insert_all`].
fn insert_vals<'a, const N: usize>(
    conn: &Connection,
    table: &str,
    cols: [&str; N],
    rows: impl ExactSizeIterator<Item = [Val<'a>; N]>,
) -> rusqlite::Result<()> {
    let head = format!("{table} ({})", cols.join(", "));
    insert_all(conn, &head, N, rows, |st, i, row| {
        for (k, v) in row.into_iter().enumerate() {
            bind_val(st, i + k, v)?;
        }
        Ok(())
    })
}

/// Writes every row of `m` with SQL INSERTs in one transaction, then builds the indexes:
/// the reference writer, and the fallback when [`image`] declines.
pub fn write(conn: &mut Connection, m: &Model) -> rusqlite::Result<()> {
    // rusqlite's bundled SQLite enforces foreign keys by default, which costs a lookup in
    // the parent table for every REFERENCES column of every row. The model only produces
    // valid references (tests check them with `PRAGMA foreign_key_check`), so enforcement is
    // off for the bulk load and restored afterwards. (The pragma is a no-op inside a
    // transaction, so it is set before one begins.)
    let fk: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA foreign_keys = OFF")?;
    let r = write_rows(conn, m);
    if fk {
        conn.execute_batch("PRAGMA foreign_keys = ON")?;
    }
    r
}

fn write_rows(conn: &mut Connection, m: &Model) -> rusqlite::Result<()> {
    let timing = std::env::var_os("SUPERPASS_TRACE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let lap = |what: &str| {
        if timing {
            eprintln!("  {what}: {:?}", t0.elapsed());
        }
    };
    let tx = conn.transaction()?;
    write_small(&tx, m)?;
    lap("small tables");
    insert_vals(&tx, "slice", SLICE_COLS, slice_rows(m))?;
    insert_vals(&tx, "counter", COUNTER_COLS, counter_rows(m))?;
    lap("slices");
    insert_vals(&tx, "sched", SCHED_COLS, sched_rows(m))?;
    lap("sched");
    // thread_state is a WITHOUT ROWID table keyed by (utid, ts, id): inserted in key
    // order, every row is an append and no index has to be sorted and built afterwards.
    // `id` stays the row's number in time order.
    let order = by_utid_ts(&m.thread_state);
    insert_vals(
        &tx,
        "thread_state",
        THREAD_STATE_COLS,
        thread_state_rows(m, &order),
    )?;
    lap("thread_state");
    tx.execute_batch(INDEXES_SQL)?;
    lap("indexes");
    tx.commit()?;
    lap("commit");
    Ok(())
}

/// Writes the small tables: processes, threads, tracks, SuperPass events, bounds, metadata.
fn write_small(tx: &Connection, m: &Model) -> rusqlite::Result<()> {
    let mut st = tx.prepare("INSERT INTO process (upid, pid, name) VALUES (?1, ?2, ?3)")?;
    for p in &m.processes {
        st.execute(params![p.upid, p.pid, p.name])?;
    }
    let pids: Vec<i32> = m.processes.iter().map(|p| p.pid).collect();
    let mut st = tx.prepare(
        "INSERT INTO thread (utid, tid, name, upid, is_main_thread) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for t in &m.threads {
        let main = t
            .upid
            .and_then(|u| pids.get(u as usize))
            .map(|&pid| pid == t.tid);
        st.execute(params![t.utid, t.tid, t.name, t.upid, main])?;
    }

    let mut track =
        tx.prepare("INSERT INTO track (id, name, type, utid, upid) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut thread_track =
        tx.prepare("INSERT INTO thread_track (id, name, utid) VALUES (?1, ?2, ?3)")?;
    let mut process_track =
        tx.prepare("INSERT INTO process_track (id, name, upid) VALUES (?1, ?2, ?3)")?;
    let mut counter_track =
        tx.prepare("INSERT INTO counter_track (id, name, upid) VALUES (?1, ?2, ?3)")?;
    for t in &m.tracks {
        let kind = match t.kind {
            TrackKind::Thread => "thread",
            TrackKind::Process => "process",
            TrackKind::Counter => "counter",
        };
        track.execute(params![t.id, t.name, kind, t.utid, t.upid])?;
        match t.kind {
            TrackKind::Thread => thread_track.execute(params![t.id, t.name, t.utid])?,
            TrackKind::Process => process_track.execute(params![t.id, t.name, t.upid])?,
            TrackKind::Counter => counter_track.execute(params![t.id, t.name, t.upid])?,
        };
    }

    let mut block = tx.prepare(
        "INSERT INTO superpass_block (ts, cpu, waiter_utid, blocker_utid, lock, kind) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut grant = tx.prepare(
        "INSERT INTO superpass_grant (ts, cpu, blocker_utid, waiter_utid, root_utid, lock, \
         depth) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut revoke = tx.prepare(
        "INSERT INTO superpass_revoke (ts, cpu, blocker_utid, reason) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut pick = tx.prepare("INSERT INTO superpass_pick (ts, cpu, utid) VALUES (?1, ?2, ?3)")?;
    for r in &m.superpass {
        match r {
            SpRow::Block {
                ts,
                cpu,
                waiter,
                blocker,
                lock,
                kind,
            } => {
                let mut buf = [0u8; 18];
                block.execute(params![
                    ts,
                    cpu,
                    waiter,
                    blocker,
                    hex(*lock, &mut buf),
                    kind
                ])?
            }
            SpRow::Grant {
                ts,
                cpu,
                blocker,
                waiter,
                root,
                lock,
                depth,
            } => {
                let mut buf = [0u8; 18];
                grant.execute(params![
                    ts,
                    cpu,
                    blocker,
                    waiter,
                    root,
                    hex(*lock, &mut buf),
                    depth
                ])?
            }
            SpRow::Revoke {
                ts,
                cpu,
                blocker,
                reason,
            } => revoke.execute(params![ts, cpu, blocker, reason])?,
            SpRow::Pick { ts, cpu, utid } => pick.execute(params![ts, cpu, utid])?,
        };
    }

    tx.execute(
        "INSERT INTO trace_bounds (start_ts, end_ts) VALUES (?1, ?2)",
        params![m.bounds.0, m.bounds.1],
    )?;
    let mut meta =
        tx.prepare("INSERT INTO metadata (name, int_value, str_value) VALUES (?1, ?2, ?3)")?;
    let d = &m.diag;
    let ints: [(&str, i64); 8] = [
        ("import_events", m.event_count as i64),
        ("import_corrupt", d.corrupt as i64),
        ("import_truncated", i64::from(d.truncated)),
        ("import_unknown", d.unknown as i64),
        ("import_out_of_order", d.out_of_order as i64),
        ("import_unmatched_ends", d.unmatched_ends as i64),
        ("import_unended_slices", d.unended_slices as i64),
        ("import_lost_events", d.lost_events as i64),
    ];
    for (name, v) in ints {
        meta.execute(params![name, v, Option::<String>::None])?;
    }
    meta.execute(params![
        "import_notes",
        Option::<i64>::None,
        d.notes.join("\n")
    ])?;
    meta.execute(params![
        "superpass_trace_version",
        Option::<i64>::None,
        env!("CARGO_PKG_VERSION")
    ])?;
    Ok(())
}

/// Where a stored column's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    /// The row's value `k` (in the table's `*_COLS` order).
    Col(usize),
    /// NULL (a column the importer does not fill, or the rowid alias inside a record).
    Null,
    /// The rowid (an `INTEGER PRIMARY KEY` column in an index key).
    Rowid,
}

/// How one index on a big table is stored.
#[derive(Debug)]
struct IndexLayout {
    root: u32,
    /// Key columns; the rowid follows them in each entry.
    key: Vec<Src>,
}

/// How a big table is stored, read from SQLite's catalog (`PRAGMA table_xinfo` and
/// friends), so that an edited `schema.sql` either still works or is declined.
#[derive(Debug)]
struct Layout {
    tree: Tree,
    root: u32,
    /// The record's columns, in storage order.
    record: Vec<Src>,
    /// Which record columns are NOT NULL.
    not_null: Vec<bool>,
    /// The row value holding the rowid (rowid tables).
    rowid: Option<usize>,
    /// `WITHOUT ROWID`: how many leading record columns form the primary key.
    key_len: usize,
    indexes: Vec<IndexLayout>,
    /// The affinity of each filled column (row value `k`).
    affinity: Vec<Affinity>,
}

/// A column's type affinity (<https://www.sqlite.org/datatype3.html>), which converts the
/// values SQL INSERTs store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Affinity {
    Integer,
    Text,
    Blob,
    Real,
    Numeric,
}

impl Affinity {
    /// The affinity of a declared type (as `sqlite3AffinityType`).
    fn of(decl: &str) -> Affinity {
        let d = decl.to_ascii_uppercase();
        if d.contains("INT") {
            Affinity::Integer
        } else if d.contains("CHAR") || d.contains("CLOB") || d.contains("TEXT") {
            Affinity::Text
        } else if d.contains("BLOB") || d.is_empty() {
            Affinity::Blob
        } else if d.contains("REAL") || d.contains("FLOA") || d.contains("DOUB") {
            Affinity::Real
        } else {
            Affinity::Numeric
        }
    }

    /// The value an INSERT stores for `v`, if this writer mirrors it. A float with an
    /// integral value goes to disk as an integer in a numeric column (and reads back as a
    /// float in a REAL column, `-0.0` as `0.0`); NaN (stored as NULL) and conversions
    /// between text and numbers are not mirrored (`None`).
    #[inline]
    fn apply(self, v: Val<'_>) -> Option<Val<'_>> {
        let numeric = matches!(self, Affinity::Integer | Affinity::Real | Affinity::Numeric);
        match v {
            Val::Null => Some(v),
            Val::Int(_) => (self != Affinity::Text).then_some(v),
            Val::Text(_) => (!numeric).then_some(v),
            Val::Real(f) if f.is_nan() => None,
            Val::Real(f) if numeric => {
                // sqlite3VdbeIntegerAffinity
                let i = if f < -9_223_372_036_854_774_784.0 {
                    i64::MIN
                } else if f > 9_223_372_036_854_774_784.0 {
                    i64::MAX
                } else {
                    f as i64
                };
                if i as f64 == f && i > i64::MIN && i < i64::MAX {
                    Some(Val::Int(i))
                } else {
                    Some(v)
                }
            }
            Val::Real(_) => (self != Affinity::Text).then_some(v),
        }
    }
}

type Declined<T> = Result<T, Unsupported>;

fn declined<T>(why: String) -> rusqlite::Result<Declined<T>> {
    Ok(Err(Unsupported(why)))
}

fn is_binary(coll: &Option<String>) -> bool {
    coll.as_deref()
        .is_none_or(|c| c.eq_ignore_ascii_case("BINARY"))
}

/// An index column: table column (-1 rowid, -2 expression), DESC, collation, key column.
type IndexColumn = (i64, bool, Option<String>, bool);

/// An index's columns in storage order.
fn index_columns(conn: &Connection, index: &str) -> rusqlite::Result<Vec<IndexColumn>> {
    let mut st = conn.prepare(
        "SELECT cid, \"desc\", coll, \"key\" FROM pragma_index_xinfo(?1) ORDER BY seqno",
    )?;
    let rows = st.query_map([index], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })?;
    rows.collect()
}

fn layout(conn: &Connection, table: &str, cols: &[&str]) -> rusqlite::Result<Declined<Layout>> {
    let Some((root, sql)) = conn
        .query_row(
            "SELECT rootpage, sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [table],
            |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)),
        )
        .optional()?
    else {
        return declined(format!("no table {table}"));
    };
    let triggers: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1",
        [table],
        |r| r.get(0),
    )?;
    if triggers > 0 || sql.to_ascii_lowercase().contains("check") {
        return declined(format!("{table} has triggers or CHECK constraints"));
    }
    let without_rowid: bool = conn.query_row(
        "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
        [table],
        |r| r.get(0),
    )?;
    // (cid, name, declared type, not null, default, pk, hidden)
    type Col = (i64, String, String, bool, Option<String>, i64, i64);
    let columns: Vec<Col> = {
        let mut st = conn.prepare(
            "SELECT cid, name, type, \"notnull\", dflt_value, pk, hidden \
             FROM pragma_table_xinfo(?1) ORDER BY cid",
        )?;
        let rows = st.query_map([table], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for c in cols {
        if !columns
            .iter()
            .any(|col| col.1.eq_ignore_ascii_case(c) && col.6 == 0)
        {
            return declined(format!("{table}.{c} missing or generated"));
        }
    }
    let src_of = |cid: i64| -> Src {
        match columns.iter().find(|c| c.0 == cid) {
            Some(c) => match cols.iter().position(|n| c.1.eq_ignore_ascii_case(n)) {
                Some(k) => Src::Col(k),
                None => Src::Null,
            },
            None => Src::Null,
        }
    };
    for c in &columns {
        match c.6 {
            0 | 2 => {}
            _ => {
                return declined(format!(
                    "{table}.{}: stored generated or hidden column",
                    c.1
                ))
            }
        }
        if c.6 == 0 && src_of(c.0) == Src::Null && (c.3 || c.4.is_some()) {
            return declined(format!(
                "{table}.{}: unfilled column with a default or NOT NULL",
                c.1
            ));
        }
    }
    let not_null_of = |cid: i64| columns.iter().any(|c| c.0 == cid && c.3);
    let mut lay = Layout {
        tree: Tree::Table,
        root,
        record: Vec::new(),
        not_null: Vec::new(),
        rowid: None,
        key_len: 0,
        indexes: Vec::new(),
        affinity: cols
            .iter()
            .map(
                |n| match columns.iter().find(|c| c.1.eq_ignore_ascii_case(n)) {
                    Some(c) => Affinity::of(&c.2),
                    None => Affinity::Blob,
                },
            )
            .collect(),
    };
    let mut ipk = None;
    if without_rowid {
        lay.tree = Tree::Index;
        let pk: Option<String> = conn
            .query_row(
                "SELECT name FROM pragma_index_list(?1) WHERE origin = 'pk'",
                [table],
                |r| r.get(0),
            )
            .optional()?;
        let Some(pk) = pk else {
            return declined(format!("{table}: no primary key index"));
        };
        for (cid, desc, coll, key) in index_columns(conn, &pk)? {
            if cid < 0 || desc || !is_binary(&coll) {
                return declined(format!(
                    "{table}: primary key is not plain ascending columns"
                ));
            }
            lay.record.push(src_of(cid));
            lay.not_null.push(not_null_of(cid));
            lay.key_len += usize::from(key);
        }
    } else {
        let pks: Vec<&Col> = columns.iter().filter(|c| c.5 > 0).collect();
        match pks.as_slice() {
            [c] if c.2.eq_ignore_ascii_case("INTEGER") => match src_of(c.0) {
                Src::Col(k) => {
                    ipk = Some(c.0);
                    lay.rowid = Some(k);
                }
                _ => return declined(format!("{table}: rowid not filled")),
            },
            _ => return declined(format!("{table}: no INTEGER PRIMARY KEY")),
        }
        for c in columns.iter().filter(|c| c.6 != 2) {
            if Some(c.0) == ipk {
                // The rowid alias is stored as NULL; its value is the rowid.
                lay.record.push(Src::Null);
                lay.not_null.push(false);
            } else {
                lay.record.push(src_of(c.0));
                lay.not_null.push(c.3);
            }
        }
    }
    let indexes: Vec<(String, bool, String, bool)> = {
        let mut st = conn.prepare(
            "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1) ORDER BY seq",
        )?;
        let rows = st.query_map([table], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (name, unique, origin, partial) in indexes {
        if without_rowid && origin == "pk" {
            continue;
        }
        if without_rowid || unique || partial {
            return declined(format!(
                "{table}: index {name} is unique, partial or on a WITHOUT ROWID table"
            ));
        }
        let root: u32 = conn.query_row(
            "SELECT rootpage FROM sqlite_schema WHERE type = 'index' AND name = ?1",
            [&name],
            |r| r.get(0),
        )?;
        let mut key = Vec::new();
        let mut aux = Vec::new();
        for (cid, desc, coll, is_key) in index_columns(conn, &name)? {
            if !is_key {
                aux.push(cid);
                continue;
            }
            if cid == -2 || desc || !is_binary(&coll) {
                return declined(format!(
                    "{table}: index {name} has expressions, DESC or collations"
                ));
            }
            key.push(if cid == -1 || Some(cid) == ipk {
                Src::Rowid
            } else {
                src_of(cid)
            });
        }
        if aux != [-1] {
            return declined(format!("{table}: index {name} stores more than the rowid"));
        }
        lay.indexes.push(IndexLayout { root, key });
    }
    Ok(Ok(lay))
}

/// A big table's rows as records, checked and ready to be laid out in pages.
struct Encoded<'a> {
    records: Vec<u8>,
    /// End offset of each record in `records`.
    ends: Vec<usize>,
    /// Each row's rowid (rowid tables).
    rowids: Vec<i64>,
    /// Per index, flattened: each entry's key columns then its rowid.
    keys: Vec<Vec<Val<'a>>>,
}

/// Applies affinities and constraints to a big table's rows and encodes their records.
fn encode_table<'a, const N: usize>(
    lay: &Layout,
    format4: bool,
    rows: impl ExactSizeIterator<Item = [Val<'a>; N]>,
) -> Declined<Encoded<'a>> {
    let mut enc = Encoded {
        records: Vec::with_capacity(rows.len() * 32),
        ends: Vec::with_capacity(rows.len()),
        rowids: Vec::new(),
        keys: lay.indexes.iter().map(|_| Vec::new()).collect(),
    };
    let mut rec: Vec<Val<'a>> = vec![Val::Null; lay.record.len()];
    let mut prev: Vec<Val<'a>> = Vec::new();
    for mut row in rows {
        for (v, aff) in row.iter_mut().zip(&lay.affinity) {
            *v = match aff.apply(*v) {
                Some(v) => v,
                None => {
                    return Err(Unsupported(format!(
                        "{v:?} in a column of {aff:?} affinity"
                    )))
                }
            };
        }
        for (slot, src) in rec.iter_mut().zip(&lay.record) {
            *slot = match *src {
                Src::Col(k) => row[k],
                Src::Null | Src::Rowid => Val::Null,
            };
        }
        for (v, &nn) in rec.iter().zip(&lay.not_null) {
            if nn && *v == Val::Null {
                return Err(Unsupported("NULL in a NOT NULL column".into()));
            }
        }
        encode_record(&rec, format4, &mut enc.records);
        enc.ends.push(enc.records.len());
        match lay.tree {
            Tree::Table => {
                let Some(Val::Int(rowid)) = lay.rowid.map(|k| row[k]) else {
                    return Err(Unsupported("rowid is not an integer".into()));
                };
                enc.rowids.push(rowid);
                for (ix, keys) in lay.indexes.iter().zip(&mut enc.keys) {
                    for src in &ix.key {
                        keys.push(match *src {
                            Src::Col(k) => row[k],
                            Src::Null => Val::Null,
                            Src::Rowid => Val::Int(rowid),
                        });
                    }
                    keys.push(Val::Int(rowid));
                }
            }
            Tree::Index => {
                let key = &rec[..lay.key_len];
                if !prev.is_empty() && compare_keys(&prev, key) != std::cmp::Ordering::Less {
                    return Err(Unsupported("rows not in primary-key order".into()));
                }
                prev.clear();
                prev.extend_from_slice(key);
            }
        }
    }
    Ok(enc)
}

/// Lays out encoded rows (and the table's indexes) in `img` as b-trees.
fn pack_table(img: &mut Image, lay: &Layout, enc: Encoded<'_>) -> Declined<()> {
    let format4 = img.format4();
    let mut tw = TreeWriter::new(img, lay.tree, lay.root);
    let mut start = 0;
    for (i, &end) in enc.ends.iter().enumerate() {
        let record = &enc.records[start..end];
        start = end;
        match lay.tree {
            Tree::Table => tw.add_row(enc.rowids[i], record)?,
            Tree::Index => tw.add_entry(record)?,
        }
    }
    tw.finish()?;
    let mut buf = Vec::with_capacity(256);
    for (ix, keys) in lay.indexes.iter().zip(&enc.keys) {
        let stride = ix.key.len() + 1;
        let entry = |i: u32| &keys[i as usize * stride..][..stride];
        let mut order: Vec<u32> = (0..(keys.len() / stride) as u32).collect();
        // Entries end with the rowid, so no two compare equal. Integer keys (the usual
        // case) sort as plain integers.
        let ints: Option<Vec<i64>> = keys
            .iter()
            .map(|v| match v {
                Val::Int(i) => Some(*i),
                _ => None,
            })
            .collect();
        match ints {
            Some(ints) => {
                order.sort_unstable_by_key(|&i| &ints[i as usize * stride..][..stride]);
            }
            None => order.sort_unstable_by(|&a, &b| compare_keys(entry(a), entry(b))),
        }
        let mut tw = TreeWriter::new(img, Tree::Index, ix.root);
        for i in order {
            buf.clear();
            encode_record(entry(i), format4, &mut buf);
            tw.add_entry(&buf)?;
        }
        tw.finish()?;
    }
    Ok(())
}

/// Writes a big table's rows (and its indexes) into `img` as b-tree pages.
fn write_table<'a, const N: usize>(
    img: &mut Image,
    lay: &Layout,
    rows: impl ExactSizeIterator<Item = [Val<'a>; N]>,
) -> Declined<()> {
    let enc = encode_table(lay, img.format4(), rows)?;
    pack_table(img, lay, enc)
}

/// Builds the whole database as bytes: SQLite creates the schema, indexes and small tables
/// in memory and serializes them; the big tables (`slice`, `counter`, `sched`,
/// `thread_state`) and their indexes are then laid out as b-tree pages ([`crate::btree`]).
/// `Ok(Err(_))` says why the page writer declined (write with [`write()`] instead). With a
/// `sink`, pages are handed to it as they are built ([`Image::set_sink`]) and the bytes
/// returned belong at the start of the file.
pub fn image(m: &Model, sink: Option<Sink>) -> rusqlite::Result<Declined<Vec<u8>>> {
    let timing = std::env::var_os("SUPERPASS_TRACE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let lap = |what: &str| {
        if timing {
            eprintln!("  {what}: {:?}", t0.elapsed());
        }
    };
    let mut conn = Connection::open_in_memory()?;
    conn.execute_batch(
        "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA foreign_keys = OFF;",
    )?;
    create(&conn)?;
    // On the still empty tables: the big tables' index b-trees are built below.
    conn.execute_batch(INDEXES_SQL)?;
    {
        let tx = conn.transaction()?;
        write_small(&tx, m)?;
        tx.commit()?;
    }
    let slice = layout(&conn, "slice", &SLICE_COLS)?;
    let counter = layout(&conn, "counter", &COUNTER_COLS)?;
    let sched = layout(&conn, "sched", &SCHED_COLS)?;
    let thread_state = layout(&conn, "thread_state", &THREAD_STATE_COLS)?;
    let bytes = conn.serialize(MAIN_DB)?.to_vec();
    drop(conn);
    lap("schema and small tables");
    let build = || -> Declined<Vec<u8>> {
        let (slice, counter, sched, thread_state) = (slice?, counter?, sched?, thread_state?);
        let mut img = Image::new(bytes)?;
        if let Some(sink) = sink {
            img.set_sink(sink);
        }
        let rows = m.slices.len() + m.counters.len() + m.sched.len() + m.thread_state.len();
        img.reserve(rows * 48);
        let format4 = img.format4();
        std::thread::scope(|scope| {
            // thread_state, the biggest table, is sorted and encoded on a second thread
            // while this one lays out the others; its pages follow theirs.
            let states = scope.spawn(|| {
                let order = by_utid_ts(&m.thread_state);
                encode_table(&thread_state, format4, thread_state_rows(m, &order))
            });
            let others = (|| -> Declined<()> {
                write_table(&mut img, &slice, slice_rows(m))?;
                write_table(&mut img, &counter, counter_rows(m))?;
                lap("slices");
                write_table(&mut img, &sched, sched_rows(m))?;
                lap("sched");
                Ok(())
            })();
            let states = states
                .join()
                .unwrap_or_else(|_| Err(Unsupported("thread_state encoder panicked".into())));
            others?;
            pack_table(&mut img, &thread_state, states?)?;
            lap("thread_state");
            Ok(img.finish())
        })
    };
    Ok(build())
}

#[cfg(test)]
mod tests {
    use super::{by_utid_ts, hex};
    use crate::model::StateRow;

    #[test]
    fn hex_matches_format() {
        for v in [
            0,
            1,
            0xf,
            0x10,
            0xdead_beef,
            0xffff_8880_1234_5678,
            u64::MAX,
        ] {
            let mut buf = [0u8; 18];
            assert_eq!(hex(v, &mut buf), format!("{v:#x}"));
        }
    }

    #[test]
    fn thread_state_order_is_utid_ts_id() {
        let row = |utid, ts| StateRow {
            ts,
            dur: -1,
            utid,
            state: 0,
            cpu: None,
            io_wait: None,
            blocked_function: None,
            waker_utid: None,
        };
        // Time order, then out of order (the fallback sort).
        let rows = [row(2, 10), row(1, 10), row(2, 10), row(1, 20), row(3, 30)];
        let ids = |rows: &[StateRow]| -> Vec<u32> {
            let sorted = by_utid_ts(rows);
            for (id, r) in &sorted {
                assert_eq!(rows[*id as usize], *r);
            }
            sorted.iter().map(|(id, _)| *id).collect()
        };
        assert_eq!(ids(&rows), vec![1, 3, 0, 2, 4]);
        let rows = [row(1, 20), row(1, 10), row(0, 5)];
        assert_eq!(ids(&rows), vec![2, 1, 0]);
        assert!(by_utid_ts(&[]).is_empty());
    }
}
