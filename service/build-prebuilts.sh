#!/usr/bin/env bash
# Cross-builds superpass-service and superpassctl for Android and writes the Soong package
# that installs them: service/prebuilt/{arm64,x86_64}/ with the binaries, the init .rc and
# VINTF fragment beside them (Soong takes no paths outside a module's directory), and
# service/prebuilt/Android.bp. The top-level Android.bp names none of these, so a checkout
# parses before this has run; run it before `m superpass-service superpassctl`.
#
# Usage: service/build-prebuilts.sh [--platform API] [--feature android_14_plus]
# Needs cargo-ndk and the NDK (ANDROID_NDK_HOME), and the Rust targets
# aarch64-linux-android and x86_64-linux-android.
set -euo pipefail
cd "$(dirname "$0")"
platform=34
features=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --platform) platform=$2; shift 2 ;;
    --feature) features+=(--features "$2"); shift 2 ;;
    *) echo "build-prebuilts.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
out=prebuilt
target=${CARGO_TARGET_DIR:-../target}
for pair in arm64:arm64-v8a:aarch64-linux-android x86_64:x86_64:x86_64-linux-android; do
  IFS=: read -r arch abi triple <<<"$pair"
  cargo ndk -t "$abi" --platform "$platform" build --release -p superpass-service --bins \
    ${features[@]+"${features[@]}"}
  mkdir -p "$out/$arch"
  for b in superpass-service superpassctl; do
    install -m 0755 "$target/$triple/release/$b" "$out/$arch/$b"
  done
done
cp superpass.rc manifest_superpass.xml "$out/"
cat >"$out/Android.bp" <<'BP'
// Written by service/build-prebuilts.sh with the binaries beside it; do not edit.

package {
    default_applicable_licenses: ["superpass_license"],
}

// The HAL service (/vendor/bin/hw/superpass-service), started by init as vendor.superpass.
cc_prebuilt_binary {
    name: "superpass-service",
    vendor: true,
    relative_install_path: "hw",
    arch: {
        arm64: {
            srcs: ["arm64/superpass-service"],
        },
        x86_64: {
            srcs: ["x86_64/superpass-service"],
        },
    },
    compile_multilib: "64",
    strip: {
        none: true,
    },
    check_elf_files: false,
    init_rc: ["superpass.rc"],
    vintf_fragments: ["manifest_superpass.xml"],
    required: ["superpassctl"],
}

// The command-line client (adb shell superpassctl ...), in system_ext so that the shell
// domain may execute it (sepolicy/system_ext/private/file_contexts).
cc_prebuilt_binary {
    name: "superpassctl",
    system_ext_specific: true,
    arch: {
        arm64: {
            srcs: ["arm64/superpassctl"],
        },
        x86_64: {
            srcs: ["x86_64/superpassctl"],
        },
    },
    compile_multilib: "64",
    strip: {
        none: true,
    },
    check_elf_files: false,
}
BP
echo "wrote $out/ (binaries, superpass.rc, manifest_superpass.xml, Android.bp)"
