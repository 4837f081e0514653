//! ART contention slices from real devices (`../shared/corpus/art`): every slice that
//! `gtech_expected_contention_slices.tsv` lists (written by the corpus's own
//! `count_art_contention.py`, not by this crate) is imported where the capture put it, and
//! `report` counts each wait once with its lock kind and owner; and the parser gives back
//! every field of the 381 contentions of Perfetto's `android_monitor_contention` oracle.

mod shared_corpus;

use std::collections::BTreeMap;

use serde_json::Value;
use superpass_trace::art::{self, Owner};
use superpass_trace::import;
use superpass_trace::report::{self, Options};

/// One row of the expected-slices table.
struct Expected {
    file: String,
    tid: i64,
    /// Microseconds, as the text trace prints them.
    ts_us: i64,
    depth: i64,
    kind: String,
    name: String,
    /// The kind of the enclosing contention slice, or the name of another enclosing slice.
    parent: String,
}

fn expected(dir: &std::path::Path) -> Vec<Expected> {
    let text = String::from_utf8(shared_corpus::read(
        dir,
        "gtech_expected_contention_slices.tsv",
    ))
    .expect("the table is UTF-8");
    text.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert!(
                c.len() >= 9,
                "gtech_expected_contention_slices.tsv: short row {l:?}"
            );
            let secs: f64 = c[3].parse().unwrap();
            Expected {
                file: c[0].into(),
                tid: c[2].parse().unwrap(),
                ts_us: (secs * 1e6).round() as i64,
                depth: c[6].parse().unwrap(),
                kind: c[7].into(),
                name: c[8].into(),
                parent: c.get(9).copied().unwrap_or("").into(),
            }
        })
        .collect()
}

/// The census kind the table's kind implies: monitors are one kind; other ART mutexes are
/// their name without the article, numbers as N.
fn census_kind(e: &Expected) -> String {
    if e.kind.starts_with("monitor_long") || e.kind == "lock_monitor" {
        return "art:monitor".into();
    }
    let lock = e.name["Lock contention on ".len()..]
        .split(" (owner tid:")
        .next()
        .unwrap();
    let lock = lock
        .strip_prefix("an ")
        .or(lock.strip_prefix("a "))
        .unwrap_or(lock);
    let words: Vec<&str> = lock
        .split(' ')
        .map(|w| if w.parse::<u64>().is_ok() { "N" } else { w })
        .collect();
    format!("art:{}", words.join(" "))
}

/// The owner number in the name: `(owner tid: N)` or the long form's `(N) waiters=`.
fn named_owner(name: &str) -> i64 {
    let digits = match name.split_once("(owner tid: ") {
        Some((_, rest)) => rest.trim_end_matches(')'),
        None => {
            let before = name.split(") waiters=").next().unwrap();
            &before[before.rfind('(').unwrap() + 1..]
        }
    };
    digits.parse().unwrap()
}

/// `monitor_contention` holds one row per monitor wait of `rows` (a long form, or a short
/// form on a monitor lock outside any long form), with the fields of its name and the owner
/// resolved (Android 8: the number is a kernel tid).
fn monitor_table_rows(conn: &rusqlite::Connection, file: &str, rows: &[&Expected]) {
    let waits: Vec<&&Expected> = rows
        .iter()
        .filter(|r| census_kind(r) == "art:monitor" && !r.parent.starts_with("monitor_long"))
        .collect();
    let n: usize = conn
        .query_row("SELECT COUNT(*) FROM monitor_contention", [], |x| x.get(0))
        .unwrap();
    assert_eq!(n, waits.len(), "{file}: monitor_contention rows");
    for r in waits {
        type Got = (
            i64,
            Option<i64>,
            Option<i64>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<i64>,
        );
        let got: Got = conn
            .query_row(
                "SELECT long_form, blocking_tid, blocking_thread_tid, blocking_thread_name, \
                 blocked_method || '(' || blocked_src || ')', short_blocked_method, waiter_count \
                 FROM monitor_contention m JOIN slice s USING (id) \
                 WHERE m.blocked_thread_tid = ?1 AND m.ts / 1000 = ?2 AND s.name = ?3",
                rusqlite::params![r.tid, r.ts_us, r.name],
                |x| {
                    Ok((
                        x.get(0)?,
                        x.get(1)?,
                        x.get(2)?,
                        x.get(3)?,
                        x.get(4)?,
                        x.get(5)?,
                        x.get(6)?,
                    ))
                },
            )
            .unwrap_or_else(|e| panic!("{file}: no row for {} at {} us: {e}", r.name, r.ts_us));
        let (long_form, tid, thread_tid, owner_name, blocked, short_blocked, waiters) = got;
        let owner = named_owner(&r.name);
        assert_eq!(tid, Some(owner), "{file}: {}", r.name);
        let exists: i64 = conn
            .query_row("SELECT COUNT(*) FROM thread WHERE tid = ?1", [owner], |x| {
                x.get(0)
            })
            .unwrap();
        let want = (owner != 0 && owner != r.tid && exists > 0).then_some(owner);
        assert_eq!(thread_tid, want, "{file}: {}", r.name);
        if r.kind.starts_with("monitor_long") {
            assert_eq!(long_form, 1);
            let c = art::parse(&r.name).unwrap();
            assert_eq!(owner_name.as_deref(), c.owner_name, "{file}: {}", r.name);
            let blocked = blocked.expect("blocked method");
            assert!(
                r.name.ends_with(&format!(" blocking from {blocked}")),
                "{file}: {} vs {blocked}",
                r.name
            );
            let short = short_blocked.expect("short blocked method");
            assert!(
                blocked.contains(&format!("{short}(")),
                "{blocked} vs {short}"
            );
            assert!(r.name.contains(&format!(" waiters={} ", waiters.unwrap())));
        } else {
            assert_eq!((long_form, blocked, waiters), (0, None, None));
        }
    }
}

/// `report`'s monitor section accounts for every monitor wait, under the blocked method
/// its long form names.
fn report_lists_monitor_methods(rep: &Value, file: &str, rows: &[&Expected]) {
    let monitors = rep["monitors"].as_array().unwrap();
    let waits: i64 = monitors.iter().map(|p| p["waits"].as_i64().unwrap()).sum();
    let census = rep["census"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "art:monitor")
        .map_or(0, |c| c["count"].as_i64().unwrap());
    assert_eq!(
        waits, census,
        "{file}: monitor waits in the monitor section"
    );
    for p in monitors {
        for side in ["blocked_methods", "blocking_methods"] {
            let n: i64 = p[side]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["count"].as_i64().unwrap())
                .sum();
            assert_eq!(n, p["waits"].as_i64().unwrap(), "{file}: {side}");
        }
    }
    for r in rows.iter().filter(|r| r.kind.starts_with("monitor_long")) {
        let c = art::parse(&r.name).unwrap();
        let blocked = c.blocked.unwrap();
        let listed = monitors.iter().any(|p| {
            p["blocked_methods"].as_array().unwrap().iter().any(|m| {
                m["method"] == blocked.method
                    && m["src"] == blocked.src
                    && m["short_method"] == blocked.short_method()
            })
        });
        assert!(listed, "{file}: {} not in the monitor section", r.name);
    }
}

#[test]
fn device_contention_slices_are_waits_with_kind_owner_and_nesting() {
    let test = "device_contention_slices_are_waits_with_kind_owner_and_nesting";
    let Some(dir) = shared_corpus::folder("art", test) else {
        return;
    };
    let rows = expected(&dir);
    assert!(!rows.is_empty());
    let mut files: BTreeMap<&str, Vec<&Expected>> = BTreeMap::new();
    for r in &rows {
        files.entry(&r.file).or_default().push(r);
    }
    let mut waits_checked = 0;
    for (file, rows) in files {
        let (conn, _) = import::import_in_memory(&shared_corpus::read(&dir, file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        // Imported where the capture put it.
        for r in &rows {
            let n: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM thread_slice WHERE tid = ?1 AND name = ?2 \
                     AND depth = ?3 AND ts / 1000 = ?4",
                    rusqlite::params![r.tid, r.name, r.depth, r.ts_us],
                    |x| x.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{file}: {} at {} us on {}", r.name, r.ts_us, r.tid);
        }
        // Reported: every slice not nested in another contention slice is one wait.
        let opts = Options {
            long_ns: 0,
            top: usize::MAX,
        };
        let rep = report::analyze(&conn, opts).unwrap();
        let mut got: BTreeMap<(i64, i64), &Value> = BTreeMap::new();
        for w in rep["long_waits"]["worst"].as_array().unwrap() {
            if w["lock"].as_str().unwrap().starts_with("art:") {
                let key = (
                    w["waiter"]["tid"].as_i64().unwrap(),
                    w["ts"].as_i64().unwrap() / 1000,
                );
                got.insert(key, w);
            }
        }
        let waits: Vec<&&Expected> = rows
            .iter()
            .filter(|r| !r.parent.starts_with("monitor_long"))
            .collect();
        assert_eq!(got.len(), waits.len(), "{file}: ART waits");
        for r in waits {
            let w = got
                .get(&(r.tid, r.ts_us))
                .unwrap_or_else(|| panic!("{file}: no wait for {} at {} us", r.name, r.ts_us));
            assert_eq!(w["lock"], census_kind(r).as_str(), "{file}: {}", r.name);
            // Android 8: the number is a kernel tid; 0 is no owner.
            let owner = named_owner(&r.name);
            let exists: i64 = conn
                .query_row("SELECT COUNT(*) FROM thread WHERE tid = ?1", [owner], |x| {
                    x.get(0)
                })
                .unwrap();
            let want = (owner != 0 && owner != r.tid && exists > 0).then_some(owner);
            assert_eq!(
                w["owner"]["thread"]["tid"].as_i64(),
                want,
                "{file}: {}",
                r.name
            );
            waits_checked += 1;
        }
        // The text says the owner waited for a CPU only where it did.
        let owner_waited = got
            .values()
            .filter(|w| w["owner"]["state"]["runnable_ns"].as_i64() > Some(0))
            .count();
        let text = report::render_text(&rep);
        assert_eq!(
            text.matches("the owner waited for a CPU").count(),
            owner_waited,
            "{file}: {text}"
        );
        monitor_table_rows(&conn, file, &rows);
        report_lists_monitor_methods(&rep, file, &rows);
        // The census has one row per lock kind, not per method string.
        for c in rep["census"].as_array().unwrap() {
            let name = c["name"].as_str().unwrap();
            assert!(!name.contains("contention"), "{file}: census row {name}");
        }
    }
    assert!(waits_checked > 0);
}

/// The oracle's fields of one node.
#[derive(Default, Debug)]
struct Node {
    fields: BTreeMap<String, String>,
}

fn oracle_nodes(text: &str) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut cur: Option<Node> = None;
    let mut nesting = 0;
    for line in text.lines() {
        let t = line.trim();
        if t == "node {" {
            cur = Some(Node::default());
            nesting = 0;
        } else if t.ends_with('{') {
            nesting += 1;
        } else if t == "}" {
            if nesting > 0 {
                nesting -= 1;
            } else if let Some(n) = cur.take() {
                nodes.push(n);
            }
        } else if let (Some(n), 0, Some((k, v))) = (cur.as_mut(), nesting, t.split_once(": ")) {
            n.fields.insert(k.into(), v.trim_matches('"').into());
        }
    }
    nodes
}

#[test]
fn parser_gives_back_every_oracle_field() {
    let test = "parser_gives_back_every_oracle_field";
    let Some(bytes) = shared_corpus::file("art", "perfetto_android_monitor_contention.out", test)
    else {
        return;
    };
    let nodes = oracle_nodes(std::str::from_utf8(&bytes).expect("the oracle is text"));
    // The corpus README: 381 parsed contentions.
    assert_eq!(nodes.len(), 381);
    for n in &nodes {
        let f = |k: &str| {
            n.fields
                .get(k)
                .unwrap_or_else(|| panic!("node {:?}: no {k}", n.fields.get("node_id")))
                .as_str()
        };
        // ART's long form, rebuilt from the fields (Android 14: kernel tids).
        let name = format!(
            "monitor contention with owner {} ({}) at {}({}) waiters={} blocking from {}({})",
            f("blocking_thread_name"),
            f("blocking_thread_tid"),
            f("blocking_method"),
            f("blocking_src"),
            f("waiter_count"),
            f("blocked_method"),
            f("blocked_src"),
        );
        let c = art::parse(&name).unwrap_or_else(|| panic!("does not parse: {name}"));
        let blocking = c.blocking.expect("owner method");
        let blocked = c.blocked.expect("waiter method");
        assert_eq!(c.owner_name, Some(f("blocking_thread_name")), "{name}");
        assert_eq!(
            c.owner,
            Owner::Id(f("blocking_thread_tid").parse().unwrap()),
            "{name}"
        );
        assert_eq!(blocking.method, f("blocking_method"), "{name}");
        assert_eq!(blocking.src, f("blocking_src"), "{name}");
        assert_eq!(
            blocking.short_method(),
            f("short_blocking_method"),
            "{name}"
        );
        assert_eq!(blocked.method, f("blocked_method"), "{name}");
        assert_eq!(blocked.src, f("blocked_src"), "{name}");
        assert_eq!(blocked.short_method(), f("short_blocked_method"), "{name}");
        assert_eq!(
            c.waiters,
            Some(f("waiter_count").parse().unwrap()),
            "{name}"
        );
        assert_eq!(c.kind(), "monitor");
    }
}
