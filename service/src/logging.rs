//! Log setup: logcat on Android, stderr elsewhere.

/// Routes the `log` crate to logcat (tag `superpass`) on Android, or to stderr with a level
/// taken from `SUPERPASS_LOG` (error, warn, info, debug, trace; default info).
pub fn init(tag: &'static str) {
    #[cfg(target_os = "android")]
    {
        android_logger::init_once(
            android_logger::Config::default()
                .with_tag(tag)
                .with_max_level(log::LevelFilter::Info),
        );
    }
    #[cfg(not(target_os = "android"))]
    {
        let level = std::env::var("SUPERPASS_LOG")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(log::LevelFilter::Info);
        static LOGGER: Stderr = Stderr;
        STDERR_TAG.get_or_init(|| tag);
        if log::set_logger(&LOGGER).is_ok() {
            log::set_max_level(level);
        }
    }
}

#[cfg(not(target_os = "android"))]
static STDERR_TAG: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

#[cfg(not(target_os = "android"))]
struct Stderr;

#[cfg(not(target_os = "android"))]
impl log::Log for Stderr {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, r: &log::Record<'_>) {
        // rsbinder is chatty at info about sessions; keep its info and below out of the way.
        if r.target().starts_with("rsbinder") && r.level() > log::Level::Warn {
            return;
        }
        let tag = STDERR_TAG.get().copied().unwrap_or("superpass");
        eprintln!("{tag}: {}: {}", r.level(), r.args());
    }

    fn flush(&self) {}
}
