#!/usr/bin/env bash
# Writes the API snapshots of vendor.superpass from aidl/vendor/superpass/*.aidl:
# aidl_api/vendor.superpass/current/ and, with --freeze N, version N with its .hash
# (the hash is AOSP's: sha1 over `sha1sum` of the sorted .aidl files plus "latest-version").
# Frozen versions are never rewritten; add the new version to aidl/Android.bp
# (versions_with_info), service/build.rs (VERSION) and the VINTF fragments.
# In an AOSP tree, `m vendor.superpass-update-api` / `m vendor.superpass-freeze-api` do the same.
set -euo pipefail
cd "$(dirname "$0")"
HEADER='///////////////////////////////////////////////////////////////////////////////
// THIS FILE IS IMMUTABLE. DO NOT EDIT IN ANY CASE.                          //
///////////////////////////////////////////////////////////////////////////////

// This file is a snapshot of an AIDL file. Do not edit it manually. There are
// two cases:
// 1). this is a frozen version file - do not edit this in any case.
// 2). this is a '"'"'current'"'"' file. If you make a backwards compatible change to
//     the interface (from the latest frozen version), the build system will
//     prompt you to update this file with `m <name>-update-api`.
//
// You must not make a backward incompatible change to any AIDL file built
// with the aidl_interface module type with versions property set. The module
// type is used to build AIDL files in a way that they can be used across
// independently updatable components of the system. If a new version of the
// interface is needed, please add a new version in the aidl_interface module
// properties.
'
snapshot() {
  local dir="aidl_api/vendor.superpass/$1/vendor/superpass"
  rm -rf "aidl_api/vendor.superpass/$1"
  mkdir -p "$dir"
  for f in vendor/superpass/*.aidl; do
    { printf '%s\n' "$HEADER"; tail -n +4 "$f" | sed '/./,$!d'; } > "$dir/$(basename "$f")"
  done
}
snapshot current
if [[ "${1:-}" == "--freeze" ]]; then
  v=${2:?usage: freeze-api.sh [--freeze VERSION]}
  if [[ -e "aidl_api/vendor.superpass/$v" ]]; then
    echo "freeze-api.sh: version $v is frozen already" >&2
    exit 1
  fi
  snapshot "$v"
  (cd "aidl_api/vendor.superpass/$v" && { find ./ -name '*.aidl' -print0 | LC_ALL=C sort -z | xargs -0 sha1sum && echo latest-version; } | sha1sum | cut -d ' ' -f 1) > "aidl_api/vendor.superpass/$v/.hash"
fi
