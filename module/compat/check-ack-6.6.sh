#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Compile check of superpass.ko's C edge against android15-6.6's scheduler
# hook prototypes, without a 6.6 kernel:
#
#   module/compat/check-ack-6.6.sh [KDIR]
#
# KDIR is a kernel build tree (default: the cached test kernel,
# $SUPERPASS_CACHE/kernel/default/build). The C files
# that name scheduler hooks are compiled with `SUPERPASS_ACK=6.6` and with
# module/compat/ack-6.6/include ahead of the kernel's own include paths, so
# <trace/hooks/sched.h> is the 6.6 mock. Warnings are errors: a probe whose
# type does not match its hook (or a hook name 6.6 lacks) fails. As a control
# the default (6.12) build must fail against the same mock, which proves the
# mock was the header used.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
module=$(dirname "$here")
cache=${SUPERPASS_CACHE:-$HOME/.cache/superpass}
kdir=${1:-$cache/kernel/default/build}
if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "check-ack-6.6: no kernel build tree at '${kdir}' (pass KDIR; cargo xtask kernel builds one)" >&2
	exit 2
fi
mock="$here/ack-6.6/include"
objs="superpass_sched.o superpass_attach.o"

# Build in a scratch copy: objects must not land in module/.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$module/." "$work/"
rm -f "$work"/*.o "$work"/.*.cmd

build() {
	# The kernel's toolchain (module/Makefile); NOSTDINC_FLAGS precedes the
	# kernel's -I options, so the mock directory wins.
	PATH=/usr/bin:/bin:$PATH make -s -C "$kdir" M="$work" LLVM=-19 \
		NOSTDINC_FLAGS="-nostdinc -I$mock" KCFLAGS=-Werror "$@" $objs
}

echo "check-ack-6.6: SUPERPASS_ACK=6.6 against $mock/trace/hooks/sched.h"
if ! build SUPERPASS_ACK=6.6 >"$work/ok.log" 2>&1; then
	cat "$work/ok.log" >&2
	echo "check-ack-6.6: FAILED: the 6.6 build does not match 6.6's prototypes" >&2
	exit 1
fi
rm -f "$work"/*.o "$work"/.*.cmd
if build SUPERPASS_ACK=6.12 >"$work/control.log" 2>&1; then
	echo "check-ack-6.6: FAILED: the 6.12 build compiled against the 6.6 mock, so the mock was not used" >&2
	exit 1
fi
grep -q 'incompatible function pointer types' "$work/control.log" || {
	cat "$work/control.log" >&2
	echo "check-ack-6.6: FAILED: the control build failed for another reason" >&2
	exit 1
}
echo "check-ack-6.6: ok ($objs compile with the 6.6 prototypes; the 6.12 ones are rejected)"
