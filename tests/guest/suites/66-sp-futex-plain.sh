# Stock behaviour: a default pthread mutex names no owner, so SuperPass cannot
# see who blocks the critical thread. This documents it (off / on figures).
# It fails if SuperPass acted at all (a grant or a fast-track pick on a lock it
# cannot see would be a bug), or if on makes the p99.9 wait more than twice
# off's. With nothing granted, the two modes differ only by run-to-run noise,
# which for a p99.9 under TCG reached +60% (on 718 ms against off 449 ms, 0
# grants), so the growth bound only catches gross harm. About 1% of the waits
# are inversions of 0.1-2 s, so the p99.9 falls among them: a mode needs 20 s
# (a few thousand waits) for it to rest on more than the one or two longest.
# At 8 s a mode (about 1,100 waits), a run with nothing granted had on at
# 3.7x off (1,568 ms against 428 ms).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-futex -l plain -m off,on -d ${SP_FUTEX_SECS:-20} -H 4 -w 500 -p 1000 -G 100 -N 1000 > /tmp/fplain.out 2>&1
rc=$?
grep -v '^M ' /tmp/fplain.out
grep '^M ' /tmp/fplain.out | cut -c3- >> "$SPTEST_METRICS"
g=$(sed -n 's/^M on_grants //p' /tmp/fplain.out)
p=$(sed -n 's/^M on_picks //p' /tmp/fplain.out)
[ "${g:-1}" -eq 0 ] && [ "${p:-1}" -eq 0 ] || { echo "FAIL SuperPass acted on an invisible lock (grants ${g:-?}, picks ${p:-?})"; rc=1; }
exit $rc
