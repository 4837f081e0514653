# superpass.ko loads, creates /dev/superpass and no test interface, attaches
# every hook and logs the active mechanisms; sp_testdev.ko adds the test device.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
fail=0
before=$(dmesg | wc -l)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || { echo "insmod superpass.ko failed"; exit 1; }
if grep -q '^sp_testdev ' /proc/modules; then :
elif [ -e /dev/superpass-test ]; then echo "FAIL superpass.ko created /dev/superpass-test"; fail=1
else echo "ok   superpass.ko has no test device"; fi
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || { echo "insmod sp_testdev.ko failed"; exit 1; }
dmesg | tail -n +$((before + 1)) | grep superpass
[ -c /dev/superpass ] || { echo "FAIL no /dev/superpass"; fail=1; }
[ -c /dev/superpass-test ] || { echo "FAIL no /dev/superpass-test"; fail=1; }
mask=$(dmesg | sed -n 's/.*superpass: active mechanisms: mask=\(0x[0-9a-f]*\).*/\1/p' | tail -1)
echo "active_mask $mask" >> "$SPTEST_METRICS"
all=$(sp-ctl stats | sed -n 's/^all_mechanisms //p')
[ "$mask" = "$all" ] || { echo "FAIL active mechanisms $mask, want $all (all of them)"; fail=1; }
[ -d /sys/kernel/tracing/events/superpass ] && echo "ok   superpass:* tracepoints exist" || { echo "FAIL no superpass tracepoints"; fail=1; }
ls /sys/kernel/tracing/events/superpass/ 2>/dev/null
if rmmod superpass 2>/dev/null; then echo "FAIL superpass.ko unloaded despite restricted hooks"; fail=1; else echo "ok   pinned by itself once its restricted hooks are attached"; fi
exit $fail
