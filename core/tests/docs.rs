//! Keeps the documentation's tables and the code in agreement.

use superpass_core::abi;
use superpass_core::tunables::TUNABLES;

fn doc(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/");
    std::fs::read_to_string(format!("{path}{name}")).unwrap_or_else(|e| panic!("docs/{name}: {e}"))
}

#[test]
fn tunables_table_matches_code() {
    let text = doc("tunables.md");
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    assert_eq!(rows.len(), TUNABLES.len(), "one row per tunable");
    for (row, d) in rows.iter().zip(TUNABLES.iter()) {
        assert_eq!(row[1], format!("`{}`", d.name), "order and names");
        assert_eq!(row[2], d.default.to_string(), "{} default", d.name);
        assert_eq!(row[3], d.min.to_string(), "{} min", d.name);
        assert_eq!(row[4], d.max.to_string(), "{} max", d.name);
        assert_eq!(row[5], d.unit, "{} unit", d.name);
    }
}

#[test]
fn abi_doc_names_every_command_and_number() {
    let text = doc("abi.md");
    for (name, cmd) in abi::COMMANDS {
        assert!(
            text.contains(&format!("`{name}`")),
            "docs/abi.md misses {name}"
        );
        assert!(
            text.contains(&format!("0x{cmd:08X}")),
            "docs/abi.md misses the number of {name}: 0x{cmd:08X}"
        );
    }
    // Each counter's row gives its index, name and the description its doc comment gives.
    let names = superpass_core::stats::COUNTER_NAMES.iter();
    for (i, (name, doc)) in names
        .zip(superpass_core::stats::COUNTER_DOCS)
        .enumerate()
        .filter(|(_, (n, _))| !n.is_empty())
    {
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let row = format!("| {i} | `{name}` | {doc} |");
        assert!(
            text.lines().any(|l| l == row),
            "docs/abi.md misses the row\n{row}"
        );
    }
    for name in abi::MECH_NAMES {
        assert!(
            text.contains(&format!("`{name}`")),
            "docs/abi.md misses mechanism {name}"
        );
    }
}
