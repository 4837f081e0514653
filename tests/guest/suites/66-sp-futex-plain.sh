# Stock behaviour: a default pthread mutex names no owner, so SuperPass cannot
# see who blocks the critical thread. This documents it (off / on figures)
# and fails if on makes the p99.9 wait more than 50% worse than off (the
# run-to-run noise of a p99.9 under TCG is of that order).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-futex -l plain -m off,on -d ${SP_FUTEX_SECS:-20} -H 4 -w 500 -p 1000 -G 50 -N 1000 > /tmp/fplain.out 2>&1
rc=$?
grep -v '^M ' /tmp/fplain.out
grep '^M ' /tmp/fplain.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
