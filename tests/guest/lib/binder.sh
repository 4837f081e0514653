# What the binder suites share (sourced): load the modules, mount binderfs, and
# run sp-binder-chain's scenario $1 in off / on / off_n10 / on_n10 over transport
# $2 (c, the default, or rust), printing its table and captures and keeping its
# metrics. The suite exits with its status.
sp_binder_suite() {
	[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || return 1
	[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || return 1
	mkdir -p /dev/binderfs
	grep -q ' /dev/binderfs ' /proc/mounts || mount -t binder binder /dev/binderfs || return 1
	out=/tmp/binder-$1-${2:-c}.out
	sp-binder-chain -t "${2:-c}" -D /dev/binderfs -s "$1" -m off,on,off_n10,on_n10 -d "${SP_BINDER_SECS:-10}" -H 4 \
		-w 500 -p 1000 > "$out" 2>&1
	rc=$?
	grep -v '^M \|^SPTRACE ' "$out"
	grep '^SPTRACE ' "$out"
	grep '^M ' "$out" | cut -c3- >> "$SPTEST_METRICS"
	return $rc
}
