//! The process dump that systrace appends to its trace text (`PROCESS DUMP`, then `ps`
//! output): process names and thread names that the events alone do not carry.
//!
//! Two shapes, told by the header: `USER PID PPID VSZ RSS WCHAN PC S NAME COMM` (a process
//! per row) and `USER PID TID CMD` (a thread per row).

use crate::events::Events;

/// Column positions, from the header line.
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    pid: usize,
    tid: Option<usize>,
    name: usize,
    /// The name runs to the end of the line (thread rows: `CMD` may hold spaces).
    name_to_end: bool,
}

/// Whether `line` starts a process dump.
pub fn is_start(line: &str) -> bool {
    line.trim() == "PROCESS DUMP"
}

/// Reads a `ps` header line; `None` if it is not one.
pub fn header(line: &str) -> Option<Columns> {
    let cols: Vec<&str> = line.split_whitespace().collect();
    if cols.first() != Some(&"USER") {
        return None;
    }
    let at = |n: &str| cols.iter().position(|c| *c == n);
    let pid = at("PID")?;
    match at("TID") {
        Some(tid) => Some(Columns {
            pid,
            tid: Some(tid),
            name: at("CMD").or(at("NAME"))?,
            name_to_end: true,
        }),
        None => Some(Columns {
            pid,
            tid: None,
            name: at("NAME").or(at("CMD"))?,
            name_to_end: false,
        }),
    }
}

/// Reads one row into `ev`; false if it is not a row of this table.
pub fn row(cols: Columns, line: &str, ev: &mut Events) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(pid) = words.get(cols.pid).and_then(|w| w.parse::<i32>().ok()) else {
        return false;
    };
    let name = if cols.name_to_end {
        (words.len() > cols.name).then(|| words[cols.name..].join(" "))
    } else {
        words.get(cols.name).map(|w| (*w).to_owned())
    };
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return false;
    };
    match cols.tid {
        Some(t) => match words.get(t).and_then(|w| w.parse::<i32>().ok()) {
            Some(tid) => ev.declare_thread(tid, Some(pid), Some(&name)),
            None => return false,
        },
        None => ev.declare_process(pid, Some(&name)),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes() {
        let mut ev = Events::default();
        let p = header("USER PID PPID VSZ RSS WCHAN PC S NAME COMM").unwrap();
        assert!(row(
            p,
            "root 1 0 13580 3076 SyS_epoll_wait 0 S /init [init]",
            &mut ev
        ));
        let t = header("USER PID TID CMD").unwrap();
        assert!(row(t, "u0_a12 1234 1240 Render Thread", &mut ev));
        assert!(!row(t, "garbage", &mut ev));
        assert_eq!(ev.processes[&1].as_deref(), Some("/init"));
        assert_eq!(ev.threads[&1240].name.as_deref(), Some("Render Thread"));
        assert_eq!(ev.threads[&1240].pid, Some(1234));
    }
}
