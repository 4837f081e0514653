//! The state the service keeps across restarts: mode and tunables, as JSON.
//!
//! Registrations are not persisted: TIDs die with their processes, and owners re-register.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file format version written by this service.
pub const FORMAT: u32 = 1;

/// What `--state` holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Persisted {
    /// File format version ([`FORMAT`]).
    pub format: u32,
    /// Whether the fast track is on.
    pub enabled: bool,
    /// Whether the top-app cpuset watcher runs.
    pub foreground_discovery: bool,
    /// Tunables set through the service, by name; the others keep the module's defaults.
    pub tunables: BTreeMap<String, u64>,
}

impl Persisted {
    /// The state of a fresh install: enabled, no discovery, default tunables.
    pub fn initial() -> Self {
        Self {
            format: FORMAT,
            enabled: true,
            foreground_discovery: false,
            tunables: BTreeMap::new(),
        }
    }

    /// Reads `path`; `Ok(None)` if it does not exist.
    pub fn load(path: &Path) -> io::Result<Option<Self>> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let p: Self = serde_json::from_str(&text)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if p.format != FORMAT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("state format {} is not {FORMAT}", p.format),
            ));
        }
        Ok(Some(p))
    }

    /// Writes `path` atomically (a temp file renamed over it).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        text.push('\n');
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrips_and_rejects_other_formats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert_eq!(Persisted::load(&path).unwrap(), None);
        let mut p = Persisted::initial();
        p.tunables.insert("max_depth".into(), 5);
        p.save(&path).unwrap();
        assert_eq!(Persisted::load(&path).unwrap(), Some(p));
        std::fs::write(
            &path,
            r#"{"format":9,"enabled":true,"foreground_discovery":false,"tunables":{}}"#,
        )
        .unwrap();
        assert!(Persisted::load(&path).is_err());
        std::fs::write(&path, "not json").unwrap();
        assert!(Persisted::load(&path).is_err());
    }
}
