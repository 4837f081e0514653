//! Who may change the service's state: a configurable list of uids.

use std::fmt;

/// Android's `AID_ROOT`.
pub const AID_ROOT: u32 = 0;
/// Android's `AID_SYSTEM` (system_server and system daemons).
pub const AID_SYSTEM: u32 = 1000;
/// Android's `AID_SHELL` (`adb shell`).
pub const AID_SHELL: u32 = 2000;

/// The uids allowed to call the mutating methods; reads are open to every caller that the
/// platform's access control (SELinux on Android) lets reach the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerPolicy {
    allowed: Vec<u32>,
}

impl Default for CallerPolicy {
    /// System and root.
    fn default() -> Self {
        Self {
            allowed: vec![AID_SYSTEM, AID_ROOT],
        }
    }
}

/// A uid list that did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadUidList(pub String);

impl fmt::Display for BadUidList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad uid `{}`: use numbers or system, root, shell, separated by commas",
            self.0
        )
    }
}

impl std::error::Error for BadUidList {}

impl CallerPolicy {
    /// A policy allowing exactly `uids`.
    pub fn new(uids: Vec<u32>) -> Self {
        Self { allowed: uids }
    }

    /// Parses `1000,0`, `system,root,shell` or a mix.
    pub fn parse(s: &str) -> Result<Self, BadUidList> {
        let mut allowed = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let uid = match part {
                "root" => AID_ROOT,
                "system" => AID_SYSTEM,
                "shell" => AID_SHELL,
                n => n.parse().map_err(|_| BadUidList(n.to_string()))?,
            };
            if !allowed.contains(&uid) {
                allowed.push(uid);
            }
        }
        Ok(Self { allowed })
    }

    /// Also allows `uid`.
    pub fn allow(&mut self, uid: u32) {
        if !self.allowed.contains(&uid) {
            self.allowed.push(uid);
        }
    }

    /// True if `uid` may change state.
    pub fn permits(&self, uid: u32) -> bool {
        self.allowed.contains(&uid)
    }

    /// The allowed uids.
    pub fn uids(&self) -> &[u32] {
        &self.allowed
    }
}

/// True if `uid` may run shell commands (`cmd`): root and shell only, as for other HALs'
/// debug entry points. Commands that change state also need [`CallerPolicy::permits`].
pub fn may_run_shell_commands(uid: u32) -> bool {
    uid == AID_ROOT || uid == AID_SHELL
}

/// True on an Android build with `ro.debuggable=1` (userdebug or eng); false elsewhere.
pub fn is_debuggable_build() -> bool {
    #[cfg(target_os = "android")]
    {
        let mut value = [0u8; 92]; // PROP_VALUE_MAX
                                   // SAFETY: the name is NUL-terminated and `value` has PROP_VALUE_MAX bytes, the most
                                   // `__system_property_get` writes.
        let n = unsafe {
            libc::__system_property_get(c"ro.debuggable".as_ptr(), value.as_mut_ptr().cast())
        };
        n == 1 && value[0] == b'1'
    }
    #[cfg(not(target_os = "android"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_numbers() {
        let p = CallerPolicy::parse("system, root,10123,shell,1000").unwrap();
        assert_eq!(p.uids(), &[1000, 0, 10123, 2000]);
        assert!(p.permits(10123));
        assert!(!p.permits(1));
        assert!(CallerPolicy::parse("nobody").is_err());
        assert!(CallerPolicy::default().permits(0));
        assert!(CallerPolicy::default().permits(1000));
        assert!(!CallerPolicy::default().permits(2000));
    }

    #[test]
    fn shell_commands_are_for_root_and_shell() {
        assert!(may_run_shell_commands(AID_ROOT));
        assert!(may_run_shell_commands(AID_SHELL));
        assert!(!may_run_shell_commands(AID_SYSTEM));
        assert!(!may_run_shell_commands(10123));
    }
}
