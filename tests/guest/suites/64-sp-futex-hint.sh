# Owner-hinted futex: the critical thread waits on the owner-word lock of
# superpass_futex.h (waiters name the holder's TID with FUTEX_WAIT) held by a
# nice-19 thread with 500 us of work inside; 4 nice-0 hogs. SuperPass off /
# on; on must cut the p99.9 wait by >= 72% against off, over >= 1000 waits
# per mode (sp-futex.c).
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-futex -l hint -m off,on,off_n10,on_n10 -d ${SP_FUTEX_SECS:-${SP_SECS:-8}} -H 4 -w 500 -p 1000 -R 72 -N 1000 > /tmp/fhint.out 2>&1
rc=$?
grep -v '^M ' /tmp/fhint.out
grep '^M ' /tmp/fhint.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
