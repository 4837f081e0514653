//! The report as text tables: times in ms, relative to the trace start; "n/a" where the
//! trace has no data for a figure.

use std::fmt::Write as _;

use serde_json::Value;

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn ms_v(v: &Value) -> String {
    v.as_i64().map_or_else(|| "-".to_owned(), ms)
}

fn who(v: &Value) -> String {
    format!(
        "{} ({})",
        v["name"].as_str().unwrap_or(""),
        v["tid"].as_i64().unwrap_or(-1)
    )
}

/// A time relative to the trace start, in ms.
fn at(ts: &Value, start: i64) -> String {
    ts.as_i64()
        .map_or_else(|| "-".to_owned(), |t| format!("+{} ms", ms(t - start)))
}

/// A percentage, or n/a.
fn pct(v: &Value) -> String {
    v.as_f64()
        .map_or_else(|| "n/a".to_owned(), |x| format!("{:.1}%", x * 100.0))
}

fn items(v: &Value) -> String {
    format!(
        "asleep {} / runnable {} / running {} / unknown {} ms",
        ms_v(&v["asleep_ns"]),
        ms_v(&v["runnable_ns"]),
        ms_v(&v["running_ns"]),
        ms_v(&v["unknown_ns"])
    )
}

/// Renders the JSON report as text tables (times in ms).
pub fn render_text(r: &Value) -> String {
    let mut o = String::new();
    let t = &r["trace"];
    let start = t["start_ts"].as_i64().unwrap_or(0);
    let _ = writeln!(
        o,
        "trace: {} ms (times below are relative to its start)",
        ms_v(&t["duration_ns"])
    );
    let no_locks = r["census"].as_array().is_none_or(Vec::is_empty);
    if no_locks {
        let slices = r["slices"].as_i64().unwrap_or(0);
        let _ = if slices > 0 {
            writeln!(
                o,
                "\nhint: this trace has {slices} slices but no lock waits: no lockwait:/lockhold: \
                 slices and no ART contention slices (\"Lock contention on ...\"; record the \
                 `dalvik` atrace category). See docs/trace.md, \"Annotating locks\"."
            )
        } else {
            writeln!(
                o,
                "\nhint: this trace has no slices at all: record atrace categories (e.g. \
                 `dalvik`, or the app's own) or annotate locks with lockwait:/lockhold: \
                 slices (docs/trace.md, \"Annotating locks\")."
            )
        };
    }
    let _ = writeln!(
        o,
        "\n== census (lockwait:* / lockhold:* / art:* ART contention) =="
    );
    let _ = writeln!(
        o,
        "{:<40} {:>7} {:>7} {:>12} {:>10} {:>10}",
        "name", "count", "unended", "total ms", "avg ms", "max ms"
    );
    for c in r["census"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "{:<40} {:>7} {:>7} {:>12} {:>10} {:>10}",
            c["name"].as_str().unwrap_or(""),
            c["count"].as_i64().unwrap_or(0),
            c["unended"].as_i64().unwrap_or(0),
            ms_v(&c["total_ns"]),
            ms_v(&c["avg_ns"]),
            ms_v(&c["max_ns"])
        );
    }
    let _ = writeln!(o, "\n== wait tails (ms) ==");
    let _ = writeln!(
        o,
        "{:<40} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "name", "count", "p50", "p90", "p95", "p99", "max"
    );
    for c in r["tails"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "{:<40} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
            c["name"].as_str().unwrap_or(""),
            c["count"].as_i64().unwrap_or(0),
            ms_v(&c["p50_ns"]),
            ms_v(&c["p90_ns"]),
            ms_v(&c["p95_ns"]),
            ms_v(&c["p99_ns"]),
            ms_v(&c["max_ns"])
        );
    }
    let a = &r["all_waits"];
    let holders = if a["waits_with_holder"].as_i64().unwrap_or(0) > 0 {
        items(&a["holders_during_waits"])
    } else {
        "n/a (no lockhold: slice or ART owner for any wait)".to_owned()
    };
    let _ = writeln!(
        o,
        "\n== all waits: {} waits, {} ms ==\n  waiter:  {}\n  holders: {} ({} waits with a holder)",
        a["count"],
        ms_v(&a["total_ns"]),
        if a["count"].as_i64().unwrap_or(0) > 0 {
            items(&a["waiter"])
        } else {
            "n/a".to_owned()
        },
        holders,
        a["waits_with_holder"].as_i64().unwrap_or(0),
    );
    let owned = a["waits_with_owner"].as_i64().unwrap_or(0);
    if owned > 0 {
        let _ = writeln!(
            o,
            "  ART names the owner of {owned} waits; the owner woke the waiter in {} of them",
            a["woken_by_owner"]
        );
    }
    monitors(&mut o, r);
    binder(&mut o, r);
    long_waits(&mut o, r, start);
    let s = &r["superpass"];
    if s.is_null() {
        let _ = writeln!(o, "\n== superpass: no superpass_* events in this trace ==");
    } else {
        let bi = &s["blocking_intervals"];
        let _ = writeln!(
            o,
            "\n== superpass: {} blocks, {} grants, {} revokes, {} picks, {} queued, {} throttles, \
             {} probe changes ==",
            s["blocks"],
            s["grants"],
            s["revokes"],
            s["picks"],
            s["queues"],
            s["throttles"],
            s["probe_changes"]
        );
        let _ = writeln!(
            o,
            "blocking intervals: {} totalling {} ms (p50 {}, p95 {}, max {} ms)\n  critical threads: {}",
            bi["count"],
            ms_v(&bi["total_ns"]),
            ms_v(&bi["p50_ns"]),
            ms_v(&bi["p95_ns"]),
            ms_v(&bi["max_ns"]),
            items(&bi["waiter"])
        );
        let g = &s["grant_latency"];
        let _ = writeln!(
            o,
            "grant -> on CPU: p50 {} ms, p95 {} ms, max {} ms ({} grants)",
            ms_v(&g["p50_ns"]),
            ms_v(&g["p95_ns"]),
            ms_v(&g["max_ns"]),
            g["count"]
        );
        let br = &s["blocker_runnable"];
        let _ = writeln!(
            o,
            "blockers runnable while blocking: {} ms before grant, {} ms after",
            ms_v(&br["before_grant_ns"]),
            ms_v(&br["after_grant_ns"])
        );
        for b in s["blockers"].as_array().into_iter().flatten() {
            let _ = writeln!(
                o,
                "- blocker {}: {} blocks, {} ms blocking, {} grants; {}",
                who(&b["blocker"]),
                b["blocks"],
                ms_v(&b["blocked_ns"]),
                b["grants"],
                items(&b["state"])
            );
        }
    }
    if let Some(c) = r.get("versus_baseline") {
        let _ = writeln!(o, "\n== versus baseline (SuperPass off) ==");
        for (k, label) in [
            (
                "waiter_runnable_share",
                "waiters' runnable share of wait time",
            ),
            (
                "holder_runnable_share",
                "holders' runnable share of wait time",
            ),
        ] {
            let v = &c[k];
            let removed = v["removed"].as_f64().map_or_else(
                || "n/a: no waits to compare".to_owned(),
                |x| format!("removed {:.1} points", x * 100.0),
            );
            let _ = writeln!(
                o,
                "{label}: baseline {} -> {} ({removed})",
                pct(&v["baseline"]),
                pct(&v["current"])
            );
        }
        let _ = writeln!(
            o,
            "total wait time: baseline {} ms -> {} ms",
            ms_v(&c["baseline_wait_total_ns"]),
            ms_v(&c["wait_total_ns"])
        );
    }
    o
}

/// Servers listed in the binder section; `--json` has `--top` of them.
const BINDER_SERVERS: usize = 5;

/// One class's row of the binder table.
fn binder_row(o: &mut String, label: &str, c: &Value) {
    let p999 = if c["count"].as_i64().unwrap_or(0) == 0 {
        "-".to_owned()
    } else if c["p999_ns"].is_null() {
        "n/a".to_owned()
    } else {
        ms_v(&c["p999_ns"])
    };
    let _ = writeln!(
        o,
        "{label:<10} {:>7} {:>11} {:>9} {:>9} {:>9} {:>7} {:>10}",
        c["count"].as_i64().unwrap_or(0),
        ms_v(&c["total_ns"]),
        ms_v(&c["p50_ns"]),
        p999,
        ms_v(&c["max_ns"]),
        c["over_frame"].as_i64().unwrap_or(0),
        ms_v(&c["queued_ns"])
    );
}

/// Synchronous binder calls as their own class of wait (only for a trace with binder
/// events, so that other traces' reports read as before).
fn binder(o: &mut String, r: &Value) {
    let b = &r["binder"];
    if b.is_null() {
        return;
    }
    let all = &b["all"];
    let crit = &b["critical"];
    let _ = writeln!(
        o,
        "\n== binder waits (synchronous calls, until the client received the reply; blocker = \
         the server thread): {} calls, {} waits ==",
        b["sync_calls"], all["count"]
    );
    let _ = writeln!(
        o,
        "{:<10} {:>7} {:>11} {:>9} {:>9} {:>9} {:>7} {:>10}",
        "class", "count", "total ms", "p50 ms", "p99.9 ms", "max ms", ">16 ms", "queued ms"
    );
    binder_row(o, "all", all);
    if crit.is_null() {
        let _ = writeln!(
            o,
            "{:<10} {:>7}  (no critical thread known: no RenderThread, no superpass_block)",
            "critical", "n/a"
        );
    } else {
        binder_row(o, "critical", crit);
    }
    let min = b["min_p999_count"].as_i64().unwrap_or(0);
    if [all, crit]
        .iter()
        .any(|c| c["p999_ns"].is_null() && c["count"].as_i64().unwrap_or(0) > 0)
    {
        let _ = writeln!(o, "  p99.9 n/a: n is too small (fewer than {min} waits)");
    }
    let _ = writeln!(
        o,
        "  queued = until a server thread took the call; servers while serving: {}",
        items(&all["server_while_serving"])
    );
    if !crit.is_null() {
        let threads: Vec<String> = crit["threads"]
            .as_array()
            .into_iter()
            .flatten()
            .map(who)
            .collect();
        let _ = writeln!(o, "  critical threads: {}", threads.join(", "));
    }
    let dropped = &b["dropped"];
    let n = |k: &str| dropped[k].as_i64().unwrap_or(0);
    let _ = writeln!(
        o,
        "  one-way calls {} (no waits); dropped (stats binder:*): {} still waiting at the \
         trace end, {} left without a reply, {} replies to calls from before the trace, {} \
         mismatched, {} malformed events",
        b["oneway_calls"],
        n("call_unended"),
        n("call_superseded"),
        n("reply_without_call"),
        n("reply_mismatch"),
        n("malformed")
    );
    let (whose, c) = if crit.is_null() {
        ("all", all)
    } else {
        ("the critical threads'", crit)
    };
    let servers = c["servers"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if !servers.is_empty() {
        let _ = writeln!(o, "  servers of {whose} waits, most wait first:");
    }
    for s in servers.iter().take(BINDER_SERVERS) {
        let _ = writeln!(
            o,
            "  - {} {}: {} waits, {} ms, max {} ms",
            s["process"].as_str().unwrap_or("(unknown process)"),
            who(&s["server"]),
            s["count"],
            ms_v(&s["total_ns"]),
            ms_v(&s["max_ns"])
        );
    }
}

/// Methods listed per process and side in the ART monitor section.
const MONITOR_METHODS: usize = 5;

/// ART monitor waits per process: the blocked and the blocking methods, most wait first.
fn monitors(o: &mut String, r: &Value) {
    let Some(procs) = r["monitors"].as_array().filter(|p| !p.is_empty()) else {
        return;
    };
    let _ = writeln!(
        o,
        "\n== ART monitors per process: blocked (waiting) and blocking (holding) methods =="
    );
    for p in procs {
        let _ = writeln!(
            o,
            "{}: {} waits, {} ms, max {} ms",
            p["process"].as_str().unwrap_or("(unknown process)"),
            p["waits"],
            ms_v(&p["total_ns"]),
            ms_v(&p["max_ns"])
        );
        for (key, side) in [
            ("blocked_methods", "blocked "),
            ("blocking_methods", "blocking"),
        ] {
            let list = p[key].as_array().map(Vec::as_slice).unwrap_or(&[]);
            for m in list.iter().take(MONITOR_METHODS) {
                let method = match (m["short_method"].as_str(), m["src"].as_str()) {
                    (Some(name), Some(src)) => format!("{name} ({src})"),
                    _ => "(not in the slice name)".to_owned(),
                };
                let _ = writeln!(
                    o,
                    "  {side} {:>5} waits {:>10} ms  max {:>9} ms  {method}",
                    m["count"].as_i64().unwrap_or(0),
                    ms_v(&m["total_ns"]),
                    ms_v(&m["max_ns"])
                );
            }
            if list.len() > MONITOR_METHODS {
                let _ = writeln!(
                    o,
                    "  {side} ... {} more (--json)",
                    list.len() - MONITOR_METHODS
                );
            }
        }
    }
}

/// The long waits, itemized (the report's section of that name).
fn long_waits(o: &mut String, r: &Value, start: i64) {
    let l = &r["long_waits"];
    let _ = writeln!(
        o,
        "\n== long waits (>= {} ms): {}; worst itemized ==",
        ms_v(&r["options"]["long_ns"]),
        l["count"]
    );
    for w in l["worst"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "- {} ms on {} by {} at {}\n    waiter: {}",
            ms_v(&w["dur"]),
            w["lock"].as_str().unwrap_or(""),
            who(&w["waiter"]),
            at(&w["ts"], start),
            items(&w["itemized"])
        );
        if !w["owner"].is_null() {
            let st = &w["owner"]["state"];
            let _ = writeln!(o, "    owner {}: {}", who(&w["owner"]["thread"]), items(st));
            // Only an owner that did wait for a CPU gives the fast track something to remove.
            if st["runnable_ns"].as_i64().is_some_and(|n| n > 0) {
                let _ = writeln!(
                    o,
                    "      (runnable {} ms: the owner waited for a CPU; SuperPass removes that)",
                    ms_v(&st["runnable_ns"])
                );
            }
        }
        for k in w["woken_by"].as_array().into_iter().flatten() {
            let _ = writeln!(
                o,
                "    woken by {} at {}{}",
                who(&k["waker"]),
                at(&k["ts"], start),
                if k["is_owner"].as_bool() == Some(true) {
                    " (the owner)"
                } else {
                    ""
                }
            );
        }
        for h in w["overlapping_holds"].as_array().into_iter().flatten() {
            let _ = writeln!(
                o,
                "    held by {} for {} ms of it: {}",
                who(&h["holder"]),
                ms_v(&h["overlap_ns"]),
                items(&h["holder_state"])
            );
        }
        if w["overlapping_holds"]
            .as_array()
            .is_some_and(|h| !h.is_empty())
        {
            let _ = writeln!(o, "    holders in all: {}", items(&w["holders"]));
        }
        superpass_in_wait(o, &w["superpass"], start);
        let barging = w["barging"].as_array().map_or(0, Vec::len);
        if barging > 0 {
            let names: Vec<String> = w["barging"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| who(&b["thread"]))
                .collect();
            let _ = writeln!(o, "    barged {barging}x: {}", names.join(", "));
        }
    }
}

/// `f` of each element of the array `v`, joined by commas; "none" for no element.
fn list(v: &Value, f: impl Fn(&Value) -> String) -> String {
    let items: Vec<String> = v.as_array().into_iter().flatten().map(f).collect();
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// What SuperPass did inside one long wait (null: the trace has no SuperPass events).
fn superpass_in_wait(o: &mut String, s: &Value, start: i64) {
    if s.is_null() {
        return;
    }
    let _ = if s["registered"].as_bool() == Some(true) {
        let blocks = list(&s["blocks"], |b| {
            format!("{} at {}", who(&b["blocker"]), at(&b["ts"], start))
        });
        writeln!(o, "    superpass: registered; blocked on {blocks}")
    } else {
        writeln!(
            o,
            "    superpass: no superpass_block names the waiter: not registered, or no \
             attached probe saw the wait"
        )
    };
    let count = |k: &str| s[k].as_array().map_or(0, Vec::len);
    let grants = list(&s["grants"], |g| {
        let regrant = g["budget_regrant"].as_bool() == Some(true);
        let note = if regrant { " (budget regrant)" } else { "" };
        format!("{} at {}{note}", who(&g["blocker"]), at(&g["ts"], start))
    });
    let revokes = list(&s["revokes"], |v| {
        let reason = v["reason"].as_str().unwrap_or("?");
        format!("{} {reason} at {}", who(&v["blocker"]), at(&v["ts"], start))
    });
    let _ = writeln!(
        o,
        "      grants {}: {grants}\n      revokes {}: {revokes}",
        count("grants"),
        count("revokes"),
    );
    let queued = capped(&s["queues"], "superpass_queue", |q| {
        let now = if q["run_now"].as_bool() == Some(true) {
            " (run_now)"
        } else {
            ""
        };
        format!(
            "{} on cpu {} at {}{now}",
            who(&q["thread"]),
            q["cpu"],
            at(&q["ts"], start)
        )
    });
    let throttles = capped(&s["throttles"], "superpass_throttle", |t| {
        format!(
            "cpu {} for {} ms at {}",
            t["cpu"],
            ms_v(&t["dur"]),
            at(&t["ts"], start)
        )
    });
    let _ = writeln!(
        o,
        "      queued{queued}\n      throttles{throttles}\n      probe groups: {}\n      \
         budget regrants {}, picks {}",
        probe_groups(&s["probe_groups"], start),
        s["budget_regrants"],
        s["picks"]
    );
}

/// Items listed per kind in a long wait's SuperPass lines; `--json` has them all.
const WAIT_ITEMS: usize = 8;

/// ` N: a, b, ...` of the array `v` (at most [`WAIT_ITEMS`] items), or what a null means:
/// `: no <event> in the trace`.
fn capped(v: &Value, event: &str, f: impl Fn(&Value) -> String) -> String {
    let Some(all) = v.as_array() else {
        return format!(": no {event} in the trace");
    };
    let mut items: Vec<String> = all.iter().take(WAIT_ITEMS).map(f).collect();
    if all.len() > WAIT_ITEMS {
        items.push(format!("... {} more (--json)", all.len() - WAIT_ITEMS));
    }
    if items.is_empty() {
        items.push("none".to_owned());
    }
    format!(" {}: {}", all.len(), items.join(", "))
}

/// The probe groups at a wait's start and each change during it.
fn probe_groups(v: &Value, start: i64) -> String {
    if v.is_null() {
        return "no superpass_probes in the trace".to_owned();
    }
    let mut parts = vec![match v["at_start"].as_str() {
        Some(g) => format!("{g} at the start"),
        None => "unknown at the start (no superpass_probes before it)".to_owned(),
    }];
    for c in v["changes"].as_array().into_iter().flatten() {
        parts.push(format!(
            "{} from {}",
            c["groups"].as_str().unwrap_or("?"),
            at(&c["ts"], start)
        ));
    }
    parts.join(", ")
}

/// Only the long waits, itemized: the report's text for one wait's capture.
pub fn render_long_waits(r: &Value) -> String {
    let mut o = String::new();
    let start = r["trace"]["start_ts"].as_i64().unwrap_or(0);
    long_waits(&mut o, r, start);
    o
}
