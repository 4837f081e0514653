#!/usr/bin/env bash
# Builds static x86_64 guest binaries for service-e2e.sh into ${1:-target/guest-bin}:
# superpass-service, superpassctl (this crate) and rsb_hub, rsb_device (rsbinder-tools).
# Static glibc (crt-static) so they run in the minimal VM image without its libraries.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=$(realpath -m "${1:-target/guest-bin}")
TARGET=x86_64-unknown-linux-gnu
export RUSTFLAGS="-C target-feature=+crt-static"
mkdir -p "$OUT"
cargo build --release -p superpass-service --target "$TARGET"
TDIR="${CARGO_TARGET_DIR:-target}/$TARGET/release"
cp "$TDIR/superpass-service" "$TDIR/superpassctl" "$OUT/"
cargo install --locked --quiet rsbinder-tools@0.12.0 --target "$TARGET" --root "$OUT/.tools" \
    --bin rsb_hub --bin rsb_device
cp "$OUT/.tools/bin/rsb_hub" "$OUT/.tools/bin/rsb_device" "$OUT/"
cp service/vm-tests/service-e2e.sh "$OUT/"
for b in superpass-service superpassctl rsb_hub rsb_device; do
    file "$OUT/$b" 2>/dev/null | grep -q 'statically linked' || echo "warning: $b is not static" >&2
done
echo "guest binaries in $OUT"
