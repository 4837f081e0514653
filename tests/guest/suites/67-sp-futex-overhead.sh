# The futex hooks' cost in one boot: uncontended FUTEX_WAKE and a two-thread
# FUTEX_WAIT/WAKE ping-pong (plain and owner-hinted), SuperPass off vs on with
# a critical thread registered (sp-futex -b). Reports ns per op and on/off
# ratios; fails only if the program fails (timing is reported, not asserted).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko testdev=1 || exit 1
sp-futex -b ${SP_FUTEX_ITERS:-100000} > /tmp/fbench.out 2>&1
rc=$?
grep -v '^M ' /tmp/fbench.out
grep '^M ' /tmp/fbench.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
