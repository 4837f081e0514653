//! `cargo xtask kernel`: the SuperPass test kernel (Debian linux-source-6.12 +
//! vm/patches + vm/kernel.config), built once and cached outside the repo.
//!
//! Other tasks use [`ensure`] to get a ready kernel and [`make`] to build
//! out-of-tree modules against it.

use crate::util::{root, wants_help};
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HELP: &str =
    "usage: cargo xtask kernel [--arch x86_64|arm64] [--variant default|kasan] [--jobs N] [--force]
                          [--print-dir]

Builds the SuperPass test kernel, or reuses the cached one:
  1. installs the Debian packages it needs (apt-get; needs root) and
     bindgen-cli 0.69.5 (cargo install, into $SUPERPASS_CACHE/tools);
  2. unpacks /usr/src/linux-source-6.12.tar.xz, applies vm/patches/*.patch
     in order (patch -p1), configures it (tinyconfig + vm/kernel.config, or
     vm/kernel-arm64.config for arm64 [+ vm/kernel-kasan.config]) and checks
     that every requested option is set;
  3. builds bzImage (arm64: Image), the in-tree modules (locktorture) and the
     Rust crates that out-of-tree Rust modules need (make LLVM=-19, Debian's
     rustc; arm64 is cross-built with ARCH=arm64 and the same toolchain);
  4. prunes the tree to what `make -C <build> M=<dir> modules` needs.

The result lives in $SUPERPASS_CACHE/kernel/<variant>-<key>/ (arm64:
arm64-<variant>-<key>/; SUPERPASS_CACHE defaults to ~/.cache/superpass).
<key> hashes the source package version, the patches, the config fragments,
the toolchain versions, the recipe and (for arm64) the architecture, so an
unchanged kernel is never rebuilt; a changed one gets a new directory.
$SUPERPASS_CACHE/kernel/<variant> (arm64: arm64-<variant>) is a symlink to
the newest build.

Layout of a cached kernel:
  bzImage       the kernel QEMU boots (arm64: Image)
  build/        kernel build tree: make -C build M=<module dir> modules
  modroot/      modules_install output (lib/modules/<release>/...)
  build.log     full make output; release  the kernel release string

Options:
  --arch A      x86_64 (the default) or arm64 (cross-built for QEMU's virt
                machine; also installs qemu-system-arm)
  --variant V   default (vm/kernel.config) or kasan (+ vm/kernel-kasan.config:
                KASAN and lockdep, for reliability tests)
  --jobs N      parallel make jobs (default: number of CPUs)
  --force       rebuild even if the cache has this kernel
  --print-dir   print only the cached kernel directory (build it first if needed)

A cold build takes ~12 min on 2 cores (see docs/kernel.md); a warm run
takes seconds. While make runs, a line every 15 s shows the objects built,
the percentage and an ETA; the total is the last build's object count
($SUPERPASS_CACHE/kernel/objects-<variant>), or an estimate (marked ~)
before any build of that variant finished.
";

/// Bumped whenever the build recipe below changes in a way that affects the output.
const RECIPE_VERSION: &str = "superpass-kernel-recipe-1";
const SOURCE_PKG: &str = "linux-source-6.12";
const SOURCE_TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";
const BINDGEN_VERSION: &str = "0.69.5";

/// A ready kernel in the cache.
pub struct Kernel {
    pub arch: Arch,
    pub dir: PathBuf,
    /// The image QEMU boots: `bzImage` (x86_64) or `Image` (arm64).
    pub bzimage: PathBuf,
    pub build: PathBuf,
    pub modroot: PathBuf,
    pub release: String,
}

/// The architecture a kernel (and everything built against it) is for. Parsed once from
/// `--arch`; x86_64 is the default everywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Arch {
    #[default]
    X86_64,
    Arm64,
}

impl Arch {
    pub fn parse(s: &str) -> Result<Arch, String> {
        match s {
            "x86_64" => Ok(Arch::X86_64),
            "arm64" => Ok(Arch::Arm64),
            _ => Err(format!("unknown architecture `{s}` (x86_64 or arm64)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Arm64 => "arm64",
        }
    }
    /// The kernel's `arch/` directory (its SRCARCH).
    pub fn srcarch(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86",
            Arch::Arm64 => "arm64",
        }
    }
    /// The make target of the boot image and where the build leaves it.
    fn image(self) -> (&'static str, &'static str) {
        match self {
            Arch::X86_64 => ("bzImage", "arch/x86/boot/bzImage"),
            Arch::Arm64 => ("Image", "arch/arm64/boot/Image"),
        }
    }
    /// The cache names of `variant`'s builds for this architecture: x86_64 keeps the plain
    /// variant name it always had, so its cache entries stay where they are.
    pub fn cache_name(self, variant: Variant) -> String {
        match self {
            Arch::X86_64 => variant.name().to_string(),
            Arch::Arm64 => format!("arm64-{}", variant.name()),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Default,
    Kasan,
}

impl Variant {
    pub fn parse(s: &str) -> Result<Variant, String> {
        match s {
            "default" => Ok(Variant::Default),
            "kasan" => Ok(Variant::Kasan),
            _ => Err(format!("unknown kernel variant `{s}` (default or kasan)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Variant::Default => "default",
            Variant::Kasan => "kasan",
        }
    }
    fn fragments(self, arch: Arch) -> Vec<PathBuf> {
        let vm = root().join("vm");
        let mut v = vec![vm.join(match arch {
            Arch::X86_64 => "kernel.config",
            Arch::Arm64 => "kernel-arm64.config",
        })];
        if self == Variant::Kasan {
            v.push(vm.join("kernel-kasan.config"));
        }
        v
    }
}

/// Options of a kernel build.
pub struct Opts {
    pub arch: Arch,
    pub variant: Variant,
    pub jobs: usize,
    pub force: bool,
    pub quiet: bool,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            arch: Arch::X86_64,
            variant: Variant::Default,
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            force: false,
            quiet: false,
        }
    }
}

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut opts = Opts::default();
    let mut print_dir = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--arch" => opts.arch = Arch::parse(it.next().ok_or("--arch needs a value")?)?,
            "--variant" => {
                opts.variant = Variant::parse(it.next().ok_or("--variant needs a value")?)?
            }
            "--jobs" | "-j" => {
                opts.jobs = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--jobs needs a positive number")?
            }
            "--force" => opts.force = true,
            "--print-dir" => {
                print_dir = true;
                opts.quiet = true
            }
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    let k = ensure(&opts)?;
    if print_dir {
        println!("{}", k.dir.display());
    } else {
        // x86_64's lines are the ones they always were.
        let what = match opts.arch {
            Arch::X86_64 => opts.variant.name().to_string(),
            a => format!("{}, {}", a.name(), opts.variant.name()),
        };
        println!("kernel {} ({what}):", k.release);
        println!("  {:<8} {}", opts.arch.image().0, k.bzimage.display());
        println!("  build    {}", k.build.display());
        println!("  modules  {}", k.modroot.display());
    }
    Ok(())
}

/// The cache root: $SUPERPASS_CACHE or ~/.cache/superpass.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("SUPERPASS_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".cache/superpass")
}

pub fn tools_dir() -> PathBuf {
    cache_root().join("tools")
}

pub fn bindgen_path() -> PathBuf {
    tools_dir().join("bin/bindgen")
}

fn log(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("[kernel] {msg}");
    }
}

fn capture(cmd: &mut Command) -> Option<String> {
    let o = cmd.stderr(Stdio::null()).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn run_quiet(step: &str, cmd: &mut Command, log_file: Option<&Path>) -> Result<(), String> {
    if let Some(l) = log_file {
        let f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(l)
            .map_err(|e| format!("{}: {e}", l.display()))?;
        let f2 = f.try_clone().map_err(|e| e.to_string())?;
        cmd.stdout(f).stderr(f2);
    }
    let st = cmd
        .status()
        .map_err(|e| format!("{step}: cannot start {:?}: {e}", cmd.get_program()))?;
    if st.success() {
        Ok(())
    } else {
        let hint = log_file.map_or(String::new(), |l| {
            format!("\n--- last lines of {} ---\n{}", l.display(), tail(l, 30))
        });
        Err(format!("{step} failed ({st}){hint}"))
    }
}

fn tail(path: &Path, n: usize) -> String {
    let s = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Installs bindgen-cli into the tools directory unless the right version is there.
pub fn ensure_bindgen(quiet: bool) -> Result<(), String> {
    let bg = bindgen_path();
    if capture(Command::new(&bg).arg("--version")).is_some_and(|v| v.contains(BINDGEN_VERSION)) {
        return Ok(());
    }
    log(
        quiet,
        &format!(
            "installing bindgen-cli {BINDGEN_VERSION} into {} (cargo install, ~2-8 min)",
            tools_dir().display()
        ),
    );
    let t = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    crate::util::run(
        "cargo install bindgen-cli",
        Command::new(cargo)
            .args([
                "install",
                "bindgen-cli",
                "--version",
                BINDGEN_VERSION,
                "--locked",
                "--root",
            ])
            .arg(tools_dir())
            .env_remove("CARGO_TARGET_DIR"),
    )?;
    log(
        quiet,
        &format!("bindgen installed in {:.0}s", t.elapsed().as_secs_f64()),
    );
    Ok(())
}

/// `make` with the toolchain the kernel was built with (Debian's rustc, clang-19, our bindgen).
/// Builds the out-of-tree module in `dir` against kernel build tree `build`, logging to
/// `dir/build.log`; returns the log, or the log of a failed build as the error.
pub fn make_module(build: &Path, arch: Arch, dir: &Path) -> Result<String, String> {
    let logf = dir.join("build.log");
    let f = fs::File::create(&logf).map_err(|e| e.to_string())?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let st = make(build, arch)
        .arg(format!("-j{jobs}"))
        .arg(format!("M={}", dir.display()))
        .arg("modules")
        .stdout(f)
        .stderr(f2)
        .status()
        .map_err(|e| format!("make: {e}"))?;
    let log = fs::read_to_string(&logf).unwrap_or_default();
    if st.success() {
        Ok(log)
    } else {
        Err(log)
    }
}

/// For arm64 it adds `ARCH=arm64`: with LLVM=-19 clang and ld.lld cross-compile by themselves
/// (`--target=aarch64-linux-gnu`), so no cross binutils are needed. x86_64 passes no ARCH.
pub fn make(dir: &Path, arch: Arch) -> Command {
    let mut c = Command::new("make");
    let path = std::env::var("PATH").unwrap_or_default();
    c.env("PATH", format!("/usr/bin:/bin:{path}"))
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .arg("-C")
        .arg(dir)
        .args([
            "LLVM=-19",
            "RUSTC=/usr/bin/rustc",
            "HOSTRUSTC=/usr/bin/rustc",
            "RUSTDOC=/usr/bin/rustdoc",
        ])
        .arg(format!("BINDGEN={}", bindgen_path().display()));
    if arch == Arch::Arm64 {
        c.arg("ARCH=arm64");
    }
    c
}

fn sha256_hex(data: &[u8]) -> Result<String, String> {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("sha256sum: {e}"))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(data)
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let s = String::from_utf8_lossy(&out.stdout);
    Ok(s.split_whitespace().next().unwrap_or_default().to_string())
}

/// The patch series, in application order.
pub fn patches() -> Result<Vec<PathBuf>, String> {
    let dir = root().join("vm/patches");
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "patch"))
        .collect();
    v.sort();
    Ok(v)
}

/// What identifies a kernel build: everything that changes its output.
/// The text head of a cache key: recipe, arch (arm64 only), variant, source and tool versions.
/// x86_64's has no arch line, so its keys are the ones it always had.
fn key_head(arch: Arch, variant: Variant, src: &str, rustc: &str, clang: &str) -> String {
    let mut desc = String::new();
    let _ = writeln!(desc, "recipe {RECIPE_VERSION}");
    if arch != Arch::X86_64 {
        let _ = writeln!(desc, "arch {}", arch.name());
    }
    let _ = writeln!(desc, "variant {}", variant.name());
    let _ = writeln!(desc, "source {SOURCE_PKG} {src}");
    for (what, v) in [("rustc", rustc), ("clang", clang)] {
        let _ = writeln!(desc, "{what} {}", v.lines().next().unwrap_or(""));
    }
    let _ = writeln!(desc, "bindgen {BINDGEN_VERSION}");
    desc
}

fn cache_key(arch: Arch, variant: Variant) -> Result<(String, String), String> {
    let src = capture(Command::new("dpkg-query").args(["-W", "-f=${Version}", SOURCE_PKG]))
        .ok_or_else(|| format!("{SOURCE_PKG} is not installed"))?;
    let rustc = capture(Command::new("/usr/bin/rustc").arg("--version")).unwrap_or_default();
    let clang = capture(Command::new("clang-19").arg("--version")).unwrap_or_default();
    let mut desc = key_head(arch, variant, &src, &rustc, &clang);
    let mut bytes = desc.clone().into_bytes();
    for p in patches()?.iter().chain(variant.fragments(arch).iter()) {
        let data = fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        let _ = writeln!(desc, "file {name} sha256={}", sha256_hex(&data)?);
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(&data);
    }
    let key = sha256_hex(&bytes)?;
    Ok((key[..16].to_string(), desc))
}

/// The cached kernel directory for `variant` if it is built, `Ok(None)` if it is not; an error
/// when its key cannot be computed yet (the kernel source package is missing).
pub fn cached(arch: Arch, variant: Variant) -> Result<Option<PathBuf>, String> {
    let (key, _) = cache_key(arch, variant)?;
    let dir = cache_root()
        .join("kernel")
        .join(format!("{}-{key}", arch.cache_name(variant)));
    Ok(dir.join(".complete").exists().then_some(dir))
}

/// The bindgen version the kernel build installs.
pub const fn bindgen_version() -> &'static str {
    BINDGEN_VERSION
}

fn kernel_from_dir(arch: Arch, dir: &Path) -> Result<Kernel, String> {
    let release = fs::read_to_string(dir.join("release"))
        .map_err(|e| format!("{}: {e}", dir.join("release").display()))?
        .trim()
        .to_string();
    Ok(Kernel {
        arch,
        bzimage: dir.join(arch.image().0),
        build: dir.join("build"),
        modroot: dir.join("modroot"),
        dir: dir.to_path_buf(),
        release,
    })
}

/// Returns the cached kernel for `opts.variant`, building it first if needed.
pub fn ensure(opts: &Opts) -> Result<Kernel, String> {
    let q = opts.quiet;
    let t0 = Instant::now();
    let arch = opts.arch;
    crate::packages::ensure_packages(arch, q)?;
    ensure_bindgen(q)?;
    let (key, desc) = cache_key(arch, opts.variant)?;
    let kroot = cache_root().join("kernel");
    let name = arch.cache_name(opts.variant);
    let dir = kroot.join(format!("{name}-{key}"));
    if dir.join(".complete").exists() && !opts.force {
        log(q, &format!("cached kernel {} (key {key})", dir.display()));
        update_link(&kroot, &name, &dir);
        return kernel_from_dir(arch, &dir);
    }
    log(
        q,
        &format!(
            "building kernel {name} -> {} (full log: {}/build.log)",
            dir.display(),
            dir.display()
        ),
    );
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    fs::write(dir.join("inputs.txt"), &desc).map_err(|e| e.to_string())?;
    let logf = dir.join("build.log");
    let build = dir.join("build");

    // 1. Source.
    let t = Instant::now();
    log(q, &format!("[1/5] unpacking {SOURCE_TARBALL}"));
    run_quiet(
        "unpack",
        Command::new("tar")
            .arg("-xf")
            .arg(SOURCE_TARBALL)
            .arg("-C")
            .arg(&dir),
        Some(&logf),
    )?;
    fs::rename(dir.join("linux-source-6.12"), &build).map_err(|e| e.to_string())?;
    for p in patches()? {
        log(
            q,
            &format!(
                "      applying {}",
                p.file_name().unwrap_or_default().to_string_lossy()
            ),
        );
        run_quiet(
            &format!("patch {}", p.display()),
            Command::new("patch")
                .args(["-p1", "--forward", "--no-backup-if-mismatch", "-d"])
                .arg(&build)
                .arg("-i")
                .arg(&p),
            Some(&logf),
        )?;
    }
    log(
        q,
        &format!("      done in {:.0}s", t.elapsed().as_secs_f64()),
    );

    // 2. Config.
    log(q, "[2/5] configuring (tinyconfig + fragments)");
    run_quiet(
        "tinyconfig",
        make(&build, arch).arg("tinyconfig"),
        Some(&logf),
    )?;
    let frags = opts.variant.fragments(arch);
    run_quiet(
        "merge_config",
        merge_config_cmd(&build, arch)
            .args(["-m", ".config"])
            .args(&frags),
        Some(&logf),
    )?;
    run_quiet(
        "olddefconfig",
        make(&build, arch).arg("olddefconfig"),
        Some(&logf),
    )?;
    verify_config(&build.join(".config"), &frags)?;
    run_quiet(
        "rustavailable",
        make(&build, arch).arg("rustavailable"),
        Some(&logf),
    )?;

    // 3. Build.
    log(
        q,
        &format!(
            "[3/5] make -j{} {} modules (~12 min on 2 cores)",
            opts.jobs,
            arch.image().0
        ),
    );
    let t = Instant::now();
    build_with_progress(&build, arch, opts.jobs, &logf, q, &name)?;
    log(q, &format!("      built in {}", mmss(t.elapsed())));

    // 4. Install modules, record the release.
    log(q, "[4/5] modules_install");
    let modroot = dir.join("modroot");
    run_quiet(
        "modules_install",
        make(&build, arch)
            .arg(format!("INSTALL_MOD_PATH={}", modroot.display()))
            .arg("INSTALL_MOD_STRIP=1")
            .arg("modules_install"),
        Some(&logf),
    )?;
    let release = capture(make(&build, arch).args(["-s", "kernelrelease"]))
        .ok_or("make kernelrelease failed")?;
    fs::write(dir.join("release"), format!("{release}\n")).map_err(|e| e.to_string())?;
    let (image, image_path) = arch.image();
    fs::copy(build.join(image_path), dir.join(image)).map_err(|e| format!("{image}: {e}"))?;

    // 5. Prune.
    log(
        q,
        "[5/5] pruning the build tree to what M= module builds need",
    );
    prune(&build, arch)?;
    fs::write(dir.join(".complete"), &desc).map_err(|e| e.to_string())?;
    update_link(&kroot, &name, &dir);
    prune_old_kernels(&kroot, &name, &dir, q);
    log(
        q,
        &format!(
            "kernel {release} ready in {} (cached: {})",
            mmss(t0.elapsed()),
            dir.display()
        ),
    );
    kernel_from_dir(arch, &dir)
}

/// `merge_config.sh` reads ARCH from the environment (it runs make alldefconfig itself).
fn merge_config_cmd(build: &Path, arch: Arch) -> Command {
    let mut c = Command::new(build.join("scripts/kconfig/merge_config.sh"));
    c.current_dir(build);
    if arch == Arch::Arm64 {
        c.env("ARCH", "arm64").env("LLVM", "-19");
    }
    c
}

/// `name` is the variant's cache name ([`Arch::cache_name`]).
fn update_link(kroot: &Path, name: &str, dir: &Path) {
    let link = kroot.join(name);
    let _ = fs::remove_file(&link);
    let _ = std::os::unix::fs::symlink(dir.file_name().unwrap_or_default(), &link);
}

/// How many earlier kernels of one variant the cache keeps beside the current one.
///
/// One, so that going back one change to the kernel's inputs costs no rebuild, while a cache that
/// sees many changes does not fill the disk (each kernel takes about 1 GB).
const KEEP_EARLIER_KERNELS: usize = 1;

/// Removes cached kernels of variant `name` other than `current` and the newest earlier ones.
fn prune_old_kernels(kroot: &Path, name: &str, current: &Path, q: bool) {
    let Ok(entries) = fs::read_dir(kroot) else {
        return;
    };
    let mut earlier: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path() != current && is_kernel_dir_of(&e.file_name().to_string_lossy(), name))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            let t = m.modified().ok()?;
            m.is_dir().then(|| (t, e.path()))
        })
        .collect();
    earlier.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (_, old) in earlier.into_iter().skip(KEEP_EARLIER_KERNELS) {
        log(
            q,
            &format!("removing the older cached kernel {}", old.display()),
        );
        if let Err(e) = fs::remove_dir_all(&old) {
            log(q, &format!("  could not remove {}: {e}", old.display()));
        }
    }
}

/// Whether `file` names a cached kernel of variant `name`: `<name>-<16 hex digits>`.
fn is_kernel_dir_of(file: &str, name: &str) -> bool {
    file.strip_prefix(name)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|k| k.len() == 16 && k.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn mmss(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

/// Every `CONFIG_X=v` and `# CONFIG_X is not set` of the fragments must hold in `.config`.
fn verify_config(dotconfig: &Path, frags: &[PathBuf]) -> Result<(), String> {
    let have = fs::read_to_string(dotconfig).map_err(|e| e.to_string())?;
    let mut set = std::collections::HashMap::new();
    for l in have.lines() {
        if let Some((k, v)) = l.split_once('=') {
            if k.starts_with("CONFIG_") {
                set.insert(k.to_string(), v.to_string());
            }
        }
    }
    let mut bad = Vec::new();
    for f in frags {
        let text = fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        for l in text.lines() {
            let l = l.trim();
            if let Some(rest) = l.strip_prefix("# CONFIG_") {
                if let Some(name) = rest.strip_suffix(" is not set") {
                    let k = format!("CONFIG_{name}");
                    if let Some(v) = set.get(&k) {
                        bad.push(format!("{k}: wanted unset, got {v}"));
                    }
                }
            } else if let Some((k, v)) = l.split_once('=') {
                if k.starts_with("CONFIG_") {
                    match set.get(k) {
                        Some(got) if got == v => {}
                        Some(got) => bad.push(format!("{k}: wanted {v}, got {got}")),
                        None => bad.push(format!("{k}: wanted {v}, got unset")),
                    }
                }
            }
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "Kconfig dropped or changed requested options (missing dependencies?):\n  {}",
            bad.join("\n  ")
        ))
    }
}

/// Objects (C and assembler objects plus Rust crates, as [`progress`] counts them) in a cold
/// build of the default variant: 1280 + 8, counted in the build.log of a real `cargo xtask
/// kernel` of vm/kernel.config (2026-12). A first build's percentage and ETA assume it until
/// that variant has its own count.
const ESTIMATED_OBJECTS: usize = 1288;

/// The expected object count of a build: how many objects and where the number comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Expected {
    objects: usize,
    /// True for [`ESTIMATED_OBJECTS`], false for the count of a finished build.
    estimated: bool,
}

/// Where the object count of the last finished build of `name` ([`Arch::cache_name`]) is kept.
fn objects_file(name: &str) -> PathBuf {
    cache_root().join("kernel").join(format!("objects-{name}"))
}

/// The last finished build's object count for `name`, or the estimate.
fn expected_objects(name: &str) -> Expected {
    fs::read_to_string(objects_file(name))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .map_or(
            Expected {
                objects: ESTIMATED_OBJECTS,
                estimated: true,
            },
            |objects| Expected {
                objects,
                estimated: false,
            },
        )
}

/// One progress line: elapsed time, objects done of the expected total, percent and ETA.
/// The ETA assumes the rest builds at the rate so far; `~` marks figures that rest on the
/// estimate rather than a finished build's count.
fn progress_line(elapsed: Duration, done: usize, exp: Expected) -> String {
    let t = mmss(elapsed);
    let tilde = if exp.estimated { "~" } else { "" };
    if done >= exp.objects {
        let whose = if exp.estimated {
            "the estimate"
        } else {
            "the last build"
        };
        return format!(
            "{t}  {done} objects (past the {tilde}{} of {whose}), ETA unknown",
            exp.objects
        );
    }
    let pct = done * 100 / exp.objects;
    let eta = if done == 0 {
        "--".to_string()
    } else {
        let secs = elapsed.as_secs_f64() * (exp.objects - done) as f64 / done as f64;
        format!("{tilde}{}", mmss(Duration::from_secs_f64(secs)))
    };
    format!(
        "{t}  {done}/{tilde}{} objects ({pct}%), ETA {eta}",
        exp.objects
    )
}

/// Runs the kernel build, printing a progress line every 15 s; records its object count for
/// the next build's ETA.
fn build_with_progress(
    build: &Path,
    arch: Arch,
    jobs: usize,
    logf: &Path,
    quiet: bool,
    name: &str,
) -> Result<(), String> {
    let f = fs::OpenOptions::new()
        .append(true)
        .open(logf)
        .map_err(|e| e.to_string())?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    let exp = expected_objects(name);
    log(
        quiet,
        &if exp.estimated {
            format!(
                "      expecting ~{} objects (an estimate: no finished {name} build recorded its count)",
                exp.objects,
            )
        } else {
            format!(
                "      expecting {} objects (the last {name} build's count)",
                exp.objects,
            )
        },
    );
    let mut child = make(build, arch)
        .arg(format!("-j{jobs}"))
        .args([arch.image().0, "modules"])
        .stdout(f)
        .stderr(f2)
        .spawn()
        .map_err(|e| format!("make: {e}"))?;
    let t = Instant::now();
    let mut last = Instant::now();
    loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            if st.success() {
                let (objs, rust, _) = progress(logf);
                // Only a cache hint: a failed write costs the next build its exact total.
                let _ = fs::write(objects_file(name), format!("{}\n", objs + rust));
                return Ok(());
            }
            return Err(format!(
                "kernel build failed ({st}); see {}\n--- last lines ---\n{}",
                logf.display(),
                tail(logf, 40)
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
        if !quiet && last.elapsed() >= Duration::from_secs(15) {
            last = Instant::now();
            let (objs, rust, latest) = progress(logf);
            eprintln!(
                "[kernel]       {}  (last: {latest})",
                progress_line(t.elapsed(), objs + rust, exp)
            );
        }
    }
}

/// Counts the C/assembler objects (`CC`, `AS` lines) and Rust crates (`RUSTC`) in the build
/// log so far, and returns the latest build step.
fn progress(logf: &Path) -> (usize, usize, String) {
    let Ok(f) = fs::File::open(logf) else {
        return (0, 0, String::new());
    };
    let (mut objs, mut rust, mut latest) = (0, 0, String::new());
    for l in BufReader::new(f).lines().map_while(Result::ok) {
        let t = l.trim_start();
        if t.starts_with("CC ") || t.starts_with("AS ") {
            objs += 1;
            latest = t.to_string();
        } else if t.starts_with("RUSTC") {
            rust += 1;
            latest = t.to_string();
        } else if t.starts_with("LD ") || t.starts_with("BUILD ") || t.starts_with("AR ") {
            latest = t.to_string();
        }
    }
    (objs, rust, latest)
}

/// Removes what out-of-tree module builds do not need: object files outside
/// scripts/, tools/ and rust/, dependency records, other architectures, docs,
/// and the .c/.S sources of drivers/, fs/, net/ and sound/ (all headers,
/// kernel/ and mm/ stay, e.g. kernel/sched/sched.h).
fn prune(build: &Path, arch: Arch) -> Result<(), String> {
    let a = arch.srcarch();
    let script = format!(
        r#"
set -e
rm -rf Documentation vmlinux.o .tmp_vmlinux* arch/{a}/boot/compressed/vmlinux.bin*
for a in arch/*/; do [ "$a" = arch/{a}/ ] || rm -rf "$a"; done
find . \( -path ./scripts -o -path ./tools -o -path ./rust \) -prune -o \
  \( -name '*.o' -o -name '.*.cmd' -o -name '*.a' -o -name '*.ko' -o -name '*.mod.c' \) \
  -type f -print0 | xargs -0 rm -f
# Driver, filesystem, network and sound sources (their headers stay).
find drivers fs net sound -type f \( -name '*.c' -o -name '*.S' \) -print0 | xargs -0 rm -f
"#
    );
    run_quiet(
        "prune",
        Command::new("sh").arg("-c").arg(&script).current_dir(build),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_config_reports_dropped_options() {
        let dir = std::env::temp_dir().join(format!("sp-kcfg-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let dot = dir.join(".config");
        let frag = dir.join("frag.config");
        fs::write(
            &dot,
            "CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_S=\"\"\n",
        )
        .unwrap();
        fs::write(&frag, "CONFIG_A=y\nCONFIG_S=\"\"\n# CONFIG_C is not set\n").unwrap();
        assert!(verify_config(&dot, std::slice::from_ref(&frag)).is_ok());
        fs::write(&frag, "CONFIG_B=y\nCONFIG_D=y\n# CONFIG_A is not set\n").unwrap();
        let err = verify_config(&dot, &[frag]).unwrap_err();
        assert!(err.contains("CONFIG_B: wanted y, got m"), "{err}");
        assert!(err.contains("CONFIG_D: wanted y, got unset"), "{err}");
        assert!(err.contains("CONFIG_A: wanted unset, got y"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn kernel_dirs_are_told_apart_by_variant() {
        assert!(is_kernel_dir_of("default-4be6f874e3714e0b", "default"));
        assert!(!is_kernel_dir_of(
            "arm64-default-4453b73ff6d006cc",
            "default"
        ));
        assert!(is_kernel_dir_of(
            "arm64-default-4453b73ff6d006cc",
            "arm64-default"
        ));
        assert!(!is_kernel_dir_of("default", "default"));
        assert!(!is_kernel_dir_of("objects-default", "default"));
        assert!(!is_kernel_dir_of("default-4be6f874e3714e0", "default"));
        assert!(!is_kernel_dir_of("default-4be6f874e3714e0z", "default"));
    }

    #[test]
    fn pruning_keeps_the_current_kernel_and_the_newest_earlier_one() {
        let root = std::env::temp_dir().join(format!("sp-kprune-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let names = [
            "default-0000000000000001",
            "default-0000000000000002",
            "default-0000000000000003",
            "kasan-0000000000000001",
            "arm64-default-0000000000000001",
        ];
        for (i, n) in names.iter().enumerate() {
            fs::create_dir_all(root.join(n)).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64);
            fs::File::open(root.join(n))
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        prune_old_kernels(
            &root,
            "default",
            &root.join("default-0000000000000001"),
            true,
        );
        let mut left: Vec<String> = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "arm64-default-0000000000000001",
                "default-0000000000000001",
                "default-0000000000000003",
                "kasan-0000000000000001",
            ]
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn progress_shows_percent_and_eta() {
        let exact = Expected {
            objects: 3000,
            estimated: false,
        };
        let est = Expected {
            estimated: true,
            ..exact
        };
        // (elapsed s, objects done, expected total, line): a third done in 5 min leaves 10 min.
        let cases = [
            (
                300,
                1000,
                exact,
                "5m00s  1000/3000 objects (33%), ETA 10m00s",
            ),
            (
                300,
                1000,
                est,
                "5m00s  1000/~3000 objects (33%), ETA ~10m00s",
            ),
            (15, 0, exact, "0m15s  0/3000 objects (0%), ETA --"),
            (
                900,
                2999,
                exact,
                "15m00s  2999/3000 objects (99%), ETA 0m00s",
            ),
            (
                960,
                3010,
                exact,
                "16m00s  3010 objects (past the 3000 of the last build), ETA unknown",
            ),
            (
                960,
                3010,
                est,
                "16m00s  3010 objects (past the ~3000 of the estimate), ETA unknown",
            ),
        ];
        for (secs, done, expected, line) in cases {
            assert_eq!(
                progress_line(Duration::from_secs(secs), done, expected),
                line
            );
        }
    }

    #[test]
    fn progress_counts_objects_and_crates() {
        let dir = std::env::temp_dir().join(format!("sp-kprog-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let logf = dir.join("build.log");
        fs::write(
            &logf,
            "  HOSTCC  scripts/basic/fixdep\n  CC      init/main.o\n  AS      arch/x86/entry/entry_64.o\n  \
             CC [M]  kernel/locking/locktorture.o\n  RUSTC L rust/core.o\n  LD      vmlinux.o\n",
        )
        .unwrap();
        assert_eq!(progress(&logf), (3, 1, "LD      vmlinux.o".to_string()));
        assert_eq!(progress(&dir.join("none")), (0, 0, String::new()));
        let _ = fs::remove_dir_all(&dir);
    }

    /// The option lines (`CONFIG_X=v`, `# CONFIG_X is not set`) of a fragment.
    fn option_lines(path: &Path) -> Vec<String> {
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::trim)
            .filter(|l| {
                l.starts_with("CONFIG_")
                    || (l.starts_with("# CONFIG_") && l.ends_with(" is not set"))
            })
            .map(String::from)
            .collect()
    }

    #[test]
    fn arm64_fragment_has_every_x86_option_but_the_x86_only_ones() {
        // The x86 options that have no meaning on arm64's virt machine; everything else of
        // vm/kernel.config must be in vm/kernel-arm64.config, value for value.
        const X86_ONLY: &[&str] = &[
            "CONFIG_ACPI=y",
            "CONFIG_HYPERVISOR_GUEST=y",
            "CONFIG_PARAVIRT=y",
            "CONFIG_KVM_GUEST=y",
            "CONFIG_SERIAL_8250=y",
            "CONFIG_SERIAL_8250_CONSOLE=y",
            "# CONFIG_PERF_EVENTS_INTEL_UNCORE is not set",
            "# CONFIG_PERF_EVENTS_INTEL_RAPL is not set",
            "# CONFIG_PERF_EVENTS_INTEL_CSTATE is not set",
            "# CONFIG_INTEL_MEI is not set",
            "# CONFIG_ACPI_AC is not set",
            "# CONFIG_ACPI_BATTERY is not set",
            "# CONFIG_ACPI_BUTTON is not set",
            "# CONFIG_ACPI_FAN is not set",
            "# CONFIG_ACPI_THERMAL is not set",
            "# CONFIG_ACPI_TABLE_UPGRADE is not set",
        ];
        let x86 = option_lines(&Variant::Default.fragments(Arch::X86_64)[0]);
        let arm = option_lines(&Variant::Default.fragments(Arch::Arm64)[0]);
        for l in X86_ONLY {
            assert!(
                x86.iter().any(|x| x == l),
                "{l} is no longer in kernel.config"
            );
            assert!(!arm.iter().any(|x| x == l), "{l} is in kernel-arm64.config");
        }
        let missing: Vec<&String> = x86
            .iter()
            .filter(|l| !X86_ONLY.contains(&l.as_str()) && !arm.contains(l))
            .collect();
        assert!(
            missing.is_empty(),
            "vm/kernel-arm64.config lacks {missing:?}"
        );
        for l in [
            "CONFIG_PCI_HOST_GENERIC=y",
            "CONFIG_SERIAL_AMBA_PL011_CONSOLE=y",
            "CONFIG_VIRTIO_CONSOLE=y",
        ] {
            assert!(arm.iter().any(|x| x == l), "{l}");
        }
    }

    #[test]
    fn only_arm64_keys_name_their_arch() {
        let x86 = key_head(
            Arch::X86_64,
            Variant::Default,
            "6.12.117-1",
            "rustc 1.96.0",
            "clang 19\nx",
        );
        assert_eq!(
            x86,
            "recipe superpass-kernel-recipe-1\nvariant default\nsource linux-source-6.12 6.12.117-1\n\
             rustc rustc 1.96.0\nclang clang 19\nbindgen 0.69.5\n"
        );
        let arm = key_head(
            Arch::Arm64,
            Variant::Default,
            "6.12.117-1",
            "rustc 1.96.0",
            "clang 19\nx",
        );
        assert_eq!(arm.replace("arch arm64\n", ""), x86);
        assert!(arm.starts_with("recipe superpass-kernel-recipe-1\narch arm64\nvariant default\n"));
    }

    #[test]
    fn arch_is_parsed_once_and_x86_keeps_its_cache_names() {
        assert_eq!(Arch::parse("x86_64"), Ok(Arch::X86_64));
        assert_eq!(Arch::parse("arm64"), Ok(Arch::Arm64));
        assert!(Arch::parse("aarch64").is_err());
        assert_eq!(Arch::default(), Arch::X86_64);
        assert_eq!(Opts::default().arch, Arch::X86_64);
        assert_eq!(Arch::X86_64.cache_name(Variant::Default), "default");
        assert_eq!(Arch::X86_64.cache_name(Variant::Kasan), "kasan");
        assert_eq!(Arch::Arm64.cache_name(Variant::Default), "arm64-default");
        assert_eq!(Arch::X86_64.image(), ("bzImage", "arch/x86/boot/bzImage"));
        assert_eq!(Arch::Arm64.image(), ("Image", "arch/arm64/boot/Image"));
        let args = |c: &Command| -> Vec<String> {
            c.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let x86 = args(&make(Path::new("/k"), Arch::X86_64));
        assert!(!x86.iter().any(|a| a.starts_with("ARCH=")), "{x86:?}");
        let arm = args(&make(Path::new("/k"), Arch::Arm64));
        assert!(arm.iter().any(|a| a == "ARCH=arm64"), "{arm:?}");
        assert!(arm.iter().any(|a| a == "LLVM=-19"), "{arm:?}");
    }

    #[test]
    fn fragments_and_patches_are_in_the_repo() {
        for arch in [Arch::X86_64, Arch::Arm64] {
            assert!(Variant::Kasan.fragments(arch).iter().all(|f| f.exists()));
        }
        let p = patches().unwrap();
        assert!(p.len() >= 4);
        assert!(p.windows(2).all(|w| w[0] < w[1]));
    }
}
