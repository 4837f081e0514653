# PI futex: the critical thread waits on a PTHREAD_PRIO_INHERIT pthread mutex
# held by a nice-19 thread with 500 us of work inside; 4 nice-0 hogs. Linux PI
# gives a CFS owner nothing; SuperPass reads the owner from the rt_mutex. On
# must cut the p99.9 wait by >= 72% against off, over >= 1000 waits per mode,
# picking boosted tasks at most 8 times per fast-tracked ms (-P 8: no reschedule
# loop around a boosted holder that runs past its CFS slice).
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-futex -l pi -m off,on,off_n10,on_n10 -d ${SP_FUTEX_SECS:-${SP_SECS:-8}} -H 4 -w 500 -p 1000 -R 72 -N 1000 -P 8 > /tmp/fpi.out 2>&1
rc=$?
grep -v '^M ' /tmp/fpi.out
grep '^M ' /tmp/fpi.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
