# A fast-tracked blocker that never releases gets no more than one budget per
# throttle window, each ended within 1 ms of it, and the nice-0 hogs keep >= 80%
# of their progress.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-bounds -d 3 -H 4 -P 80 > /tmp/b.out 2>&1
rc=$?
grep -v '^M ' /tmp/b.out
grep '^M ' /tmp/b.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
