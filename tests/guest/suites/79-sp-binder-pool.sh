# A critical thread's synchronous binder call finds no free pool thread: the server's one
# pool thread (nice 10) is kept busy by a nice-10 client's calls of 500 us of work each,
# under 4 nice-0 hogs (sp-binder-chain -s pool), so the critical call is queued behind a
# background call. With SuperPass on, the busy pool thread is the queued call's blocker
# (max_pool_candidates) until it takes the call, then its owner. It fails unless the binder
# mechanism is live and every on mode tracked the calls and granted; the p99.9 cut is
# reported, not judged yet (docs/module.md).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
mkdir -p /dev/binderfs
grep -q ' /dev/binderfs ' /proc/mounts || mount -t binder binder /dev/binderfs || exit 1
secs=$(sed -n 's/.*sp\.secs=\([0-9]*\).*/\1/p' /proc/cmdline)
sp-binder-chain -D /dev/binderfs -s pool -m off,on,off_n10,on_n10 -d ${secs:-10} -H 4 -w 500 \
	-p 1000 > /tmp/bpool.out 2>&1
rc=$?
grep -v '^M \|^SPTRACE ' /tmp/bpool.out
grep '^SPTRACE ' /tmp/bpool.out
grep '^M ' /tmp/bpool.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
