//! Bulk-loads sorted rows straight into SQLite b-tree pages.
//!
//! SQLite's INSERT path costs ~4,000 instructions per row (the VDBE program, binding,
//! b-tree seeks and rebalancing), which made it ~70% of an import. The rows of the big
//! tables are already sorted by their keys when the model is built, so their b-trees can be
//! laid out bottom-up in one pass instead, in the documented, stable file format
//! (<https://www.sqlite.org/fileformat2.html>): records, table b-trees (rowid tables) and index
//! b-trees (`WITHOUT ROWID` tables and indexes), leaves filled completely, interior levels
//! built from the leaves.
//!
//! SQLite itself still creates the database: the schema, the small tables and the empty root
//! page of every big table and index are made by SQL in an in-memory database, which is then
//! serialized into an [`Image`]. The trees built here are appended to that image and their
//! roots copied over the empty root pages. Whatever this module does not handle (overflow
//! pages, a non-UTF-8 database, auto-vacuum, ...) it reports as [`Unsupported`], and the
//! caller falls back to SQL inserts; it never panics on any row data.

use std::cmp::Ordering;

/// One column value of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val<'a> {
    /// SQL NULL.
    Null,
    /// 64-bit integer.
    Int(i64),
    /// 64-bit float (never NaN: SQLite stores NaN as NULL; see [`Unsupported`]).
    Real(f64),
    /// UTF-8 text.
    Text(&'a str),
}

/// Why the page writer declined to write something; the caller writes with SQL instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn unsupported<T>(why: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(why.into()))
}

/// Appends SQLite's big-endian varint (1-9 bytes) for `v`.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v <= 0x7f {
        out.push(v as u8);
    } else {
        put_varint_long(out, v);
    }
}

fn put_varint_long(out: &mut Vec<u8>, v: u64) {
    if v & 0xff00_0000_0000_0000 != 0 {
        // Nine bytes: eight of 7 bits, then a full byte.
        let mut buf = [0u8; 9];
        buf[8] = v as u8;
        let mut w = v >> 8;
        for b in buf[..8].iter_mut().rev() {
            *b = (w as u8 & 0x7f) | 0x80;
            w >>= 7;
        }
        out.extend_from_slice(&buf);
        return;
    }
    let n = varint_len(v);
    for i in (0..n).rev() {
        let group = ((v >> (7 * i)) & 0x7f) as u8;
        out.push(if i == 0 { group } else { group | 0x80 });
    }
}

/// The length of [`put_varint`]'s encoding of `v`.
#[inline]
pub fn varint_len(v: u64) -> usize {
    if v <= 0x7f {
        1
    } else if v & 0xff00_0000_0000_0000 != 0 {
        9
    } else {
        (64 - v.leading_zeros() as usize).div_ceil(7)
    }
}

/// A value's serial type and body length in a record (as `sqlite3VdbeSerialType`).
#[inline]
fn serial_type(v: &Val<'_>, format4: bool) -> (u64, usize) {
    match *v {
        Val::Null => (0, 0),
        Val::Int(i) => {
            let u = if i < 0 { !(i as u64) } else { i as u64 };
            if u <= 127 {
                if format4 && (i == 0 || i == 1) {
                    (8 + i as u64, 0)
                } else {
                    (1, 1)
                }
            } else if u <= 32_767 {
                (2, 2)
            } else if u <= 8_388_607 {
                (3, 3)
            } else if u <= 2_147_483_647 {
                (4, 4)
            } else if u <= 0x7fff_ffff_ffff {
                (5, 6)
            } else {
                (6, 8)
            }
        }
        Val::Real(_) => (7, 8),
        Val::Text(s) => (13 + 2 * s.len() as u64, s.len()),
    }
}

/// Appends the record (header and body) of `vals`. `format4`: the database's schema format
/// is 4, which allows the bodiless serial types 8 and 9 for the integers 0 and 1.
pub fn encode_record(vals: &[Val<'_>], format4: bool, out: &mut Vec<u8>) {
    let start = out.len();
    // The header: its length (one byte for up to 127 bytes, patched below), serial types.
    out.push(0);
    for v in vals {
        put_varint(out, serial_type(v, format4).0);
    }
    let header_len = out.len() - start;
    if header_len <= 0x7f {
        out[start] = header_len as u8;
    } else {
        // A longer header needs a longer length varint, which counts itself.
        let types = out.split_off(start + 1);
        out.truncate(start);
        let mut len = types.len() + 1;
        while varint_len(len as u64) + types.len() != len {
            len = types.len() + varint_len(len as u64);
        }
        put_varint(out, len as u64);
        out.extend_from_slice(&types);
    }
    for v in vals {
        match *v {
            Val::Null => {}
            Val::Int(i) => {
                let b = i.to_be_bytes();
                match serial_type(v, format4).1 {
                    1 => out.push(b[7]),
                    2 => out.extend_from_slice(&b[6..]),
                    3 => out.extend_from_slice(&b[5..]),
                    4 => out.extend_from_slice(&b[4..]),
                    6 => out.extend_from_slice(&b[2..]),
                    8 => out.extend_from_slice(&b),
                    _ => {}
                }
            }
            Val::Real(f) => out.extend_from_slice(&f.to_bits().to_be_bytes()),
            Val::Text(s) => out.extend_from_slice(s.as_bytes()),
        }
    }
}

/// SQLite's order of two values under the BINARY collation: NULL, then numbers (integers
/// and floats compared by value), then text (bytewise).
pub fn compare(a: &Val<'_>, b: &Val<'_>) -> Ordering {
    fn class(v: &Val<'_>) -> u8 {
        match v {
            Val::Null => 0,
            Val::Int(_) | Val::Real(_) => 1,
            Val::Text(_) => 2,
        }
    }
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => x.cmp(y),
        (Val::Real(x), Val::Real(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Val::Int(i), Val::Real(r)) => int_float(*i, *r),
        (Val::Real(r), Val::Int(i)) => int_float(*i, *r).reverse(),
        (Val::Text(x), Val::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => class(a).cmp(&class(b)),
    }
}

/// Compares an integer with a float exactly (as `sqlite3IntFloatCompare`).
fn int_float(i: i64, r: f64) -> Ordering {
    if r.is_nan() {
        return Ordering::Greater;
    }
    if r < -9_223_372_036_854_775_808.0 {
        return Ordering::Greater;
    }
    if r >= 9_223_372_036_854_775_808.0 {
        return Ordering::Less;
    }
    let t = r.trunc() as i64;
    match i.cmp(&t) {
        Ordering::Equal => 0.0f64
            .partial_cmp(&(r - r.trunc()))
            .unwrap_or(Ordering::Equal),
        o => o,
    }
}

/// Compares two keys column by column.
pub fn compare_keys(a: &[Val<'_>], b: &[Val<'_>]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match compare(x, y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// Receives appended pages as they are built: (file offset, bytes of whole pages).
pub type Sink = Box<dyn FnMut(u64, Vec<u8>)>;

/// Appended pages are handed to the sink in chunks of about this many bytes.
const CHUNK: usize = 1 << 20;

/// A database file as bytes: what SQLite serialized (the prefix, whose empty root pages are
/// overwritten), plus the pages appended here (the tail). With a [`Sink`], the tail is
/// handed over in chunks as it grows, so that a file can be written while pages are built.
pub struct Image {
    prefix: Vec<u8>,
    tail: Vec<u8>,
    /// Page number of the tail's first page.
    tail_first: u32,
    sink: Option<Sink>,
    page_size: usize,
    usable: usize,
    format4: bool,
    /// The page holding the lock byte at offset 2^30, which SQLite never uses.
    lock_page: u32,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Image {
    /// Takes a database serialized by SQLite (`sqlite3_serialize`).
    pub fn new(bytes: Vec<u8>) -> Result<Image, Unsupported> {
        if bytes.len() < 512 || !bytes.starts_with(b"SQLite format 3\0") {
            return unsupported("not a serialized SQLite database");
        }
        let page_size = match u16::from_be_bytes([bytes[16], bytes[17]]) {
            1 => 65_536,
            n => usize::from(n),
        };
        if !page_size.is_power_of_two() || page_size < 512 || !bytes.len().is_multiple_of(page_size)
        {
            return unsupported(format!("page size {page_size}"));
        }
        let usable = page_size - usize::from(bytes[20]);
        if usable < 480 {
            return unsupported("reserved bytes per page");
        }
        if be32(&bytes, 52) != 0 {
            return unsupported("auto-vacuum database");
        }
        if be32(&bytes, 56) != 1 {
            return unsupported("database text encoding is not UTF-8");
        }
        let format4 = be32(&bytes, 44) >= 4;
        let lock_page = (0x4000_0000 / page_size + 1) as u32;
        let tail_first = (bytes.len() / page_size) as u32 + 1;
        if tail_first > lock_page {
            return unsupported("database already past the lock-byte page");
        }
        Ok(Image {
            prefix: bytes,
            tail: Vec::new(),
            tail_first,
            sink: None,
            page_size,
            usable,
            format4,
            lock_page,
        })
    }

    /// Hands appended pages to `sink` as they are built instead of keeping them; see
    /// [`Image::finish`].
    pub fn set_sink(&mut self, sink: Sink) {
        self.sink = Some(sink);
    }

    /// Reserves room for about `bytes` more bytes of pages.
    pub fn reserve(&mut self, bytes: usize) {
        self.tail.reserve(match self.sink {
            Some(_) => CHUNK + self.page_size,
            None => bytes,
        });
    }

    /// Whether records may use serial types 8 and 9.
    pub fn format4(&self) -> bool {
        self.format4
    }

    fn pages(&self) -> u32 {
        self.tail_first - 1 + (self.tail.len() / self.page_size) as u32
    }

    /// Hands the tail to the sink, if there is one.
    fn flush(&mut self) {
        if let Some(sink) = &mut self.sink {
            let offset = u64::from(self.tail_first - 1) * self.page_size as u64;
            let pages = (self.tail.len() / self.page_size) as u32;
            let chunk =
                std::mem::replace(&mut self.tail, Vec::with_capacity(CHUNK + self.page_size));
            self.tail_first += pages;
            sink(offset, chunk);
        }
    }

    /// Appends a zeroed page and returns its number (skipping the lock-byte page).
    fn alloc(&mut self) -> Result<u32, Unsupported> {
        if self.tail.len() >= CHUNK {
            self.flush();
        }
        let mut pgno = self.pages() + 1;
        if pgno == self.lock_page {
            self.tail.resize(self.tail.len() + self.page_size, 0);
            pgno += 1;
        }
        if pgno >= 0x7fff_fffe {
            return unsupported("database too large");
        }
        self.tail.resize(self.tail.len() + self.page_size, 0);
        Ok(pgno)
    }

    fn page_mut(&mut self, pgno: u32) -> Result<&mut [u8], Unsupported> {
        let ps = self.page_size;
        let prefix_pages = (self.prefix.len() / ps) as u32;
        if (2..=prefix_pages).contains(&pgno) {
            let at = (pgno as usize - 1) * ps;
            Ok(&mut self.prefix[at..at + ps])
        } else if pgno >= self.tail_first && pgno <= self.pages() {
            let at = (pgno - self.tail_first) as usize * ps;
            Ok(&mut self.tail[at..at + ps])
        } else {
            unsupported(format!("page {pgno} out of range"))
        }
    }

    /// Sets the header's page count and change counter. Without a sink, returns the whole
    /// database; with one, hands it the rest of the tail and returns the prefix, which
    /// belongs at offset 0 (after the tail: it holds the roots and the header).
    pub fn finish(mut self) -> Vec<u8> {
        let pages = self.pages();
        let counter = be32(&self.prefix, 24).wrapping_add(1);
        self.prefix[24..28].copy_from_slice(&counter.to_be_bytes());
        self.prefix[28..32].copy_from_slice(&pages.to_be_bytes());
        // "Version-valid-for": the page count above is current.
        self.prefix[92..96].copy_from_slice(&counter.to_be_bytes());
        if self.sink.is_some() {
            if !self.tail.is_empty() {
                self.flush();
            }
        } else {
            self.prefix.append(&mut self.tail);
        }
        self.prefix
    }
}

/// Which b-tree format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    /// A rowid table: leaves hold (rowid, record); interior cells hold rowids.
    Table,
    /// An index or a `WITHOUT ROWID` table: every entry is a record, stored once, in a leaf
    /// or as an interior separator.
    Index,
}

/// The cells of one page under construction.
#[derive(Default)]
struct Page {
    data: Vec<u8>,
    /// End offset in `data` of each cell.
    ends: Vec<usize>,
    /// Bytes the cells take in the page (at least 4 each, as SQLite counts them).
    used: usize,
    /// Right-most child (interior pages).
    right: u32,
}

impl Page {
    fn fits(&self, header: usize, usable: usize, cell: usize) -> bool {
        header + 2 * (self.ends.len() + 1) + self.used + cell.max(4) <= usable
    }

    fn push(&mut self, cell: &[u8]) {
        self.data.extend_from_slice(cell);
        self.ends.push(self.data.len());
        self.used += cell.len().max(4);
    }

    fn pop(&mut self) -> Option<Vec<u8>> {
        self.ends.pop()?;
        let start = self.ends.last().copied().unwrap_or(0);
        let cell = self.data.split_off(start);
        self.used -= cell.len().max(4);
        Some(cell)
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Lays the page out: header, cell pointers, cells packed at the end of the usable area.
    fn render(&self, kind: u8, leaf: bool, usable: usize, out: &mut [u8]) {
        let header = if leaf { 8 } else { 12 };
        out.fill(0);
        out[0] = kind;
        out[3..5].copy_from_slice(&(self.ends.len() as u16).to_be_bytes());
        if !leaf {
            out[8..12].copy_from_slice(&self.right.to_be_bytes());
        }
        let mut pos = usable;
        let mut start = 0;
        for (i, &end) in self.ends.iter().enumerate() {
            let cell = &self.data[start..end];
            pos -= cell.len().max(4);
            out[pos..pos + cell.len()].copy_from_slice(cell);
            let ptr = header + 2 * i;
            out[ptr..ptr + 2].copy_from_slice(&(pos as u16).to_be_bytes());
            start = end;
        }
        // 65,536 is written as 0.
        out[5..7].copy_from_slice(&((pos & 0xffff) as u16).to_be_bytes());
    }
}

/// Builds one b-tree from entries given in key order and installs it at its root page.
///
/// Pages are filled completely. A page is written once the page after it has its first
/// cell, so that the last page of a level can take a cell from the one before if it would
/// otherwise be empty (an index entry that moved up as a separator leaves nothing behind).
pub struct TreeWriter<'i> {
    img: &'i mut Image,
    tree: Tree,
    root: u32,
    cur: Page,
    /// The previous page of the current level, not yet written, and the separator after it.
    closed: Option<(Page, Vec<u8>)>,
    /// Written pages of the level and the separator after each.
    children: Vec<(u32, Vec<u8>)>,
    cell: Vec<u8>,
    last_rowid: Option<i64>,
    max_local: usize,
    rows: u64,
}

impl<'i> TreeWriter<'i> {
    /// A writer for the b-tree whose (empty) root page is `root`.
    pub fn new(img: &'i mut Image, tree: Tree, root: u32) -> TreeWriter<'i> {
        let u = img.usable;
        // The largest payload kept on the page; larger ones need overflow pages.
        let max_local = match tree {
            Tree::Table => u - 35,
            Tree::Index => (u - 12) * 64 / 255 - 23,
        };
        TreeWriter {
            img,
            tree,
            root,
            cur: Page::default(),
            closed: None,
            children: Vec::new(),
            cell: Vec::new(),
            last_rowid: None,
            max_local,
            rows: 0,
        }
    }

    fn kind(&self, leaf: bool) -> u8 {
        match (self.tree, leaf) {
            (Tree::Table, true) => 0x0d,
            (Tree::Table, false) => 0x05,
            (Tree::Index, true) => 0x0a,
            (Tree::Index, false) => 0x02,
        }
    }

    fn write(&mut self, page: &Page, leaf: bool) -> Result<u32, Unsupported> {
        let pgno = self.img.alloc()?;
        let kind = self.kind(leaf);
        let usable = self.img.usable;
        page.render(kind, leaf, usable, self.img.page_mut(pgno)?);
        Ok(pgno)
    }

    /// Ends the current page with `sep` after it; writes the page before it.
    fn close(&mut self, leaf: bool, sep: Vec<u8>) -> Result<(), Unsupported> {
        let page = std::mem::take(&mut self.cur);
        if let Some((prev, prev_sep)) = self.closed.take() {
            let pgno = self.write(&prev, leaf)?;
            self.children.push((pgno, prev_sep));
        }
        self.closed = Some((page, sep));
        Ok(())
    }

    /// Adds a row of a rowid table; rowids must increase.
    pub fn add_row(&mut self, rowid: i64, record: &[u8]) -> Result<(), Unsupported> {
        debug_assert_eq!(self.tree, Tree::Table);
        if self.last_rowid.is_some_and(|last| rowid <= last) {
            return unsupported("rowids not increasing");
        }
        if record.len() > self.max_local {
            return unsupported("row too large for one page (needs overflow pages)");
        }
        let mut cell = std::mem::take(&mut self.cell);
        cell.clear();
        put_varint(&mut cell, record.len() as u64);
        put_varint(&mut cell, rowid as u64);
        cell.extend_from_slice(record);
        if !self.cur.fits(8, self.img.usable, cell.len()) {
            let mut sep = Vec::with_capacity(9);
            put_varint(&mut sep, self.last_rowid.unwrap_or(0) as u64);
            self.close(true, sep)?;
        }
        self.cur.push(&cell);
        self.cell = cell;
        self.last_rowid = Some(rowid);
        self.rows += 1;
        Ok(())
    }

    /// Adds an index entry (or `WITHOUT ROWID` row); entries must come in key order.
    pub fn add_entry(&mut self, record: &[u8]) -> Result<(), Unsupported> {
        debug_assert_eq!(self.tree, Tree::Index);
        if record.len() > self.max_local {
            return unsupported("index entry too large for one page (needs overflow pages)");
        }
        let mut cell = std::mem::take(&mut self.cell);
        cell.clear();
        put_varint(&mut cell, record.len() as u64);
        cell.extend_from_slice(record);
        if self.cur.fits(8, self.img.usable, cell.len()) {
            self.cur.push(&cell);
        } else {
            // The entry moves up between this page and the next.
            self.close(true, cell.clone())?;
        }
        self.cell = cell;
        self.rows += 1;
        Ok(())
    }

    /// Rows or entries added so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// If the level's last page is empty, moves the last separator into it and the last cell
    /// of the page before up in its place. Interior cells start with the 4-byte child that
    /// becomes the previous page's right-most child.
    fn rebalance_last(&mut self, leaf: bool) -> Result<(), Unsupported> {
        if !self.cur.is_empty() {
            return Ok(());
        }
        let Some((mut prev, sep)) = self.closed.take() else {
            return Ok(());
        };
        if prev.ends.len() < 2 {
            return unsupported("page holds too few cells");
        }
        let Some(last) = prev.pop() else {
            return unsupported("empty page");
        };
        if leaf {
            self.cur.push(&sep);
            self.closed = Some((prev, last));
        } else {
            let mut cell = prev.right.to_be_bytes().to_vec();
            cell.extend_from_slice(&sep);
            self.cur.push(&cell);
            prev.right = be32(&last, 0);
            self.closed = Some((prev, last[4..].to_vec()));
        }
        Ok(())
    }

    /// Writes the remaining pages and the interior levels, and installs the root.
    pub fn finish(mut self) -> Result<(), Unsupported> {
        let mut leaf = true;
        loop {
            self.rebalance_last(leaf)?;
            if let Some((prev, sep)) = self.closed.take() {
                let pgno = self.write(&prev, leaf)?;
                self.children.push((pgno, sep));
            }
            if self.children.is_empty() {
                // One page left on this level: the root.
                let kind = self.kind(leaf);
                let usable = self.img.usable;
                let cur = std::mem::take(&mut self.cur);
                cur.render(kind, leaf, usable, self.img.page_mut(self.root)?);
                return Ok(());
            }
            let cur = std::mem::take(&mut self.cur);
            let pgno = self.write(&cur, leaf)?;
            let mut children = std::mem::take(&mut self.children);
            children.push((pgno, Vec::new()));
            // The next level up: a cell per child (child page, separator after it); the last
            // child is the right-most pointer.
            leaf = false;
            let last = children.len() - 1;
            for (i, (child, sep)) in children.into_iter().enumerate() {
                if i == last {
                    self.cur.right = child;
                    break;
                }
                let mut cell = Vec::with_capacity(4 + sep.len());
                cell.extend_from_slice(&child.to_be_bytes());
                cell.extend_from_slice(&sep);
                if self.cur.fits(12, self.img.usable, cell.len()) {
                    self.cur.push(&cell);
                } else {
                    self.cur.right = child;
                    self.close(false, sep)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_sqlite() {
        let cases: [(u64, &[u8]); 6] = [
            (0, &[0]),
            (0x7f, &[0x7f]),
            (0x80, &[0x81, 0x00]),
            (0x3fff, &[0xff, 0x7f]),
            (0x4000, &[0x81, 0x80, 0x00]),
            (u64::MAX, &[0xff; 9]),
        ];
        for (v, want) in cases {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out, want, "{v:#x}");
            assert_eq!(varint_len(v), want.len());
        }
        let mut out = Vec::new();
        put_varint(&mut out, 0x00ff_ffff_ffff_ffff);
        assert_eq!(out.len(), 8);
        put_varint(&mut out, 0x0100_0000_0000_0000);
        assert_eq!(out.len(), 17);
    }

    #[test]
    fn records_use_the_smallest_serial_types() {
        let mut out = Vec::new();
        encode_record(
            &[
                Val::Null,
                Val::Int(0),
                Val::Int(1),
                Val::Int(-1),
                Val::Int(200),
                Val::Int(-5_000_000_000),
                Val::Real(1.5),
                Val::Text("ab"),
            ],
            true,
            &mut out,
        );
        let mut want = vec![9, 0, 8, 9, 1, 2, 5, 7, 17];
        want.push(0xff);
        want.extend_from_slice(&200i16.to_be_bytes());
        want.extend_from_slice(&(-5_000_000_000i64).to_be_bytes()[2..]);
        want.extend_from_slice(&1.5f64.to_bits().to_be_bytes());
        want.extend_from_slice(b"ab");
        assert_eq!(out, want);
    }

    /// Builds a rowid table and a `WITHOUT ROWID` table of `n` rows in 512-byte pages (many
    /// levels, every way a level can end) and has SQLite check and read them back.
    fn round_trip(n: i64) {
        use rusqlite::Connection;
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "PRAGMA page_size = 512; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); \
             CREATE TABLE w (k INTEGER, v TEXT, PRIMARY KEY (k)) WITHOUT ROWID;",
        )
        .unwrap();
        let root = |name: &str| -> u32 {
            conn.query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .unwrap()
        };
        let (rt, rw) = (root("t"), root("w"));
        let bytes = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
        let mut img = Image::new(bytes).unwrap();
        let text = |i: i64| "x".repeat((i % 7 * 5) as usize);
        let mut rec = Vec::new();
        let mut tw = TreeWriter::new(&mut img, Tree::Table, rt);
        for i in 0..n {
            rec.clear();
            encode_record(&[Val::Null, Val::Text(&text(i))], true, &mut rec);
            tw.add_row(i * 3 - 100, &rec).unwrap();
        }
        tw.finish().unwrap();
        let mut tw = TreeWriter::new(&mut img, Tree::Index, rw);
        for i in 0..n {
            rec.clear();
            encode_record(&[Val::Int(i * 1000), Val::Text(&text(i))], true, &mut rec);
            tw.add_entry(&rec).unwrap();
        }
        tw.finish().unwrap();
        let bytes = img.finish();
        let mut db = Connection::open_in_memory().unwrap();
        db.deserialize_read_exact(rusqlite::MAIN_DB, &bytes[..], bytes.len(), true)
            .unwrap();
        let ok: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "n = {n}");
        for (sql, mul, add) in [
            ("SELECT id, v FROM t ORDER BY id", 3, -100),
            ("SELECT k, v FROM w ORDER BY k", 1000, 0),
        ] {
            let got: Vec<(i64, String)> = db
                .prepare(sql)
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let expected: Vec<(i64, String)> = (0..n).map(|i| (i * mul + add, text(i))).collect();
            assert_eq!(got, expected, "n = {n}: {sql}");
        }
    }

    #[test]
    fn trees_of_every_shape_read_back() {
        for n in 0..700 {
            round_trip(n);
        }
        round_trip(5000);
    }

    #[test]
    fn ordering_is_sqlites() {
        use Val::*;
        assert_eq!(compare(&Null, &Int(-5)), Ordering::Less);
        assert_eq!(compare(&Int(2), &Real(1.5)), Ordering::Greater);
        assert_eq!(compare(&Real(2.0), &Int(2)), Ordering::Equal);
        assert_eq!(compare(&Int(i64::MAX), &Text("")), Ordering::Less);
        assert_eq!(compare(&Text("a"), &Text("ab")), Ordering::Less);
        assert_eq!(
            compare_keys(&[Int(1), Int(2)], &[Int(1), Int(3)]),
            Ordering::Less
        );
    }
}
