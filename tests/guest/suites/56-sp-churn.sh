# Critical threads and blockers exit (SIGKILL, or on their own) while
# fast-tracked; nothing stays registered or boosted; no oops/WARN.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-churn -n ${SP_CHURN_ROUNDS:-150} -d 30 > /tmp/c.out 2>&1
rc=$?
grep -v '^M ' /tmp/c.out
grep '^M ' /tmp/c.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
