# Unload: restricted probes are never detached and ACK pins nobody, so
# superpass.ko pins itself once one is attached. rmmod must be refused (the
# probes would otherwise point at freed text), and the kernel must stay
# healthy: SuperPass keeps working after the refused rmmod (the kernel-log
# check of the boot fails the run on any oops or warning).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
fail=0
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
refs=$(sed -n 's/^superpass [0-9]* \([0-9]*\).*/\1/p' /proc/modules)
echo "refcount ${refs:-none}" >> "$SPTEST_METRICS"
[ "${refs:-0}" -ge 1 ] || { echo "FAIL superpass.ko is not pinned (refcount ${refs:-none})"; fail=1; }
for i in 1 2 3; do
	if rmmod superpass 2>/tmp/rmmod.err; then
		echo "FAIL rmmod superpass succeeded with restricted probes attached"; fail=1; break
	fi
done
echo "ok   rmmod refused: $(cat /tmp/rmmod.err)"
[ -c /dev/superpass ] || { echo "FAIL /dev/superpass gone"; fail=1; }
sp-inversion -l mutex -m on -d 3 -H 2 -w 300 -p 2000 > /tmp/unload.out 2>&1 || { cat /tmp/unload.out; fail=1; }
g=$(sed -n 's/^M on_grants //p' /tmp/unload.out)
echo "grants_after_rmmod ${g:-0}" >> "$SPTEST_METRICS"
[ "${g:-0}" -gt 0 ] || { echo "FAIL no grants after the refused rmmod"; fail=1; }
exit $fail
