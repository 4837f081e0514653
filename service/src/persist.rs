//! The state the service keeps across restarts: mode, tunables and RT-UI, as JSON.
//!
//! Registrations are not persisted: TIDs die with their processes, and owners re-register.
//!
//! Loading fails closed: fields this version does not know are ignored (a newer service may
//! have written them), and a file that cannot be read as state is renamed aside, not
//! overwritten, so nothing the user set is lost. Saving writes a temporary file, syncs it and
//! renames it over the old one, so a crash leaves either the old state or the new.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file format version written by this service.
pub const FORMAT: u32 = 1;

/// What `--state` holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Persisted {
    /// File format version ([`FORMAT`]).
    pub format: u32,
    /// Whether the fast track is on.
    pub enabled: bool,
    /// Whether the top-app cpuset watcher runs.
    pub foreground_discovery: bool,
    /// Tunables set through the service, by name; the others keep the module's defaults.
    pub tunables: BTreeMap<String, u64>,
    /// Whether RT-UI makes the critical UI and render threads SCHED_FIFO ([`crate::rtui`]);
    /// a file from before the setting existed reads as off.
    #[serde(default)]
    pub fifo: bool,
}

impl Persisted {
    /// The state of a fresh install: enabled, no discovery, default tunables, RT-UI off.
    pub fn initial() -> Self {
        Self {
            format: FORMAT,
            enabled: true,
            foreground_discovery: false,
            tunables: BTreeMap::new(),
            fifo: false,
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

    /// Writes `path` atomically: a temp file, synced, renamed over it, and the directory
    /// synced so the rename itself survives a crash.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        text.push('\n');
        let tmp = path.with_extension("json.tmp");
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// Renames an unreadable state file aside (`<path>.bad`, or `.bad.N` if that exists) so
    /// that the next save does not destroy it; returns where it went.
    pub fn set_aside(path: &Path) -> io::Result<PathBuf> {
        let mut n = 0;
        loop {
            let mut name = path.as_os_str().to_owned();
            name.push(if n == 0 {
                ".bad".to_string()
            } else {
                format!(".bad.{n}")
            });
            let aside = PathBuf::from(name);
            if !aside.exists() {
                std::fs::rename(path, &aside)?;
                return Ok(aside);
            }
            n += 1;
        }
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

    #[test]
    fn unknown_fields_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(
            &path,
            r#"{"format":1,"enabled":false,"foreground_discovery":true,"tunables":{"max_depth":2},"from_a_newer_service":[1,2]}"#,
        )
        .unwrap();
        let p = Persisted::load(&path).unwrap().unwrap();
        assert!(!p.enabled && p.foreground_discovery);
        assert_eq!(p.tunables.get("max_depth"), Some(&2));
        assert!(!p.fifo, "a file without the RT-UI setting reads as off");
    }

    #[test]
    fn the_rt_ui_setting_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut p = Persisted::initial();
        assert!(!p.fifo, "off by default");
        p.fifo = true;
        p.save(&path).unwrap();
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"fifo\": true"));
        assert!(Persisted::load(&path).unwrap().unwrap().fifo);
    }

    #[test]
    fn a_bad_file_is_set_aside_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "garbage one").unwrap();
        let a = Persisted::set_aside(&path).unwrap();
        assert_eq!(a, dir.path().join("state.json.bad"));
        std::fs::write(&path, "garbage two").unwrap();
        let b = Persisted::set_aside(&path).unwrap();
        assert_eq!(b, dir.path().join("state.json.bad.1"));
        assert_eq!(std::fs::read_to_string(a).unwrap(), "garbage one");
        assert_eq!(std::fs::read_to_string(b).unwrap(), "garbage two");
        assert!(!path.exists());
        // The next save starts afresh without touching the set-aside copies.
        Persisted::initial().save(&path).unwrap();
        assert_eq!(Persisted::load(&path).unwrap(), Some(Persisted::initial()));
    }
}
