# Vendor modules already fill both probes of android_rvh_replace_next_task_fair (-EBUSY for
# SuperPass, as on a Pixel/QCOM kernel): superpass.ko still loads, runs with the
# other hooks, and GET_STATS and the kernel log say which mechanisms are active.
#@boot sp-busy  (sp_pickthief.ko must fill the pick hook before superpass.ko loads)
fail=0
insmod /lib/modules/sp/sp_pickthief.ko || { echo "FAIL insmod sp_pickthief"; exit 1; }
before=$(dmesg | wc -l)
insmod /lib/modules/sp/superpass.ko || { echo "FAIL superpass.ko did not load"; exit 1; }
insmod /lib/modules/sp/sp_testdev.ko || { echo "FAIL sp_testdev.ko did not load"; exit 1; }
dmesg | tail -n +$((before + 1)) | grep superpass > /tmp/busy.log
cat /tmp/busy.log
grep -q "android_rvh_replace_next_task_fair not attached (-16)" /tmp/busy.log || { echo "FAIL no -EBUSY report"; fail=1; }
grep -q "pick: unavailable (hook owned by another module)" /tmp/busy.log || { echo "FAIL log does not name the missing mechanism"; fail=1; }
sp-ctl stats > /tmp/busy.stats
mask=$(sed -n 's/^active_mask //p' /tmp/busy.stats)
all=$(sed -n 's/^all_mechanisms //p' /tmp/busy.stats)
want=$(printf '0x%x' $(( all & ~(1 << 8) )))
echo "active_mask $mask" >> "$SPTEST_METRICS"
[ "$mask" = "$want" ] || { echo "FAIL active_mask $mask, want $want (all but pick, bit 8)"; fail=1; }
# Still works: ABI, and a critical thread's blocker is found and granted.
sp-abi -n 2000 -x > /tmp/abi.out 2>&1 || { cat /tmp/abi.out; fail=1; }
sp-inversion -l mutex -m on -d 3 -H 2 -w 300 -p 2000 > /tmp/inv.out 2>&1 || { cat /tmp/inv.out; fail=1; }
grep -v '^M ' /tmp/inv.out
g=$(sed -n 's/^M on_grants //p' /tmp/inv.out)
echo "grants_without_pick ${g:-0}" >> "$SPTEST_METRICS"
[ "${g:-0}" -gt 0 ] || { echo "FAIL no grants with the remaining mechanisms"; fail=1; }
exit $fail
