# locktorture (mutex, then rwsem) for 20 s each (SP_SECS s when vm-test --secs
# sets it) with SuperPass enabled and the torture kthreads registered as
# critical threads. No oops, WARN or lockdep report (the host scans the kernel
# log), and locktorture reports SUCCESS.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
[ -n "$(find /lib/modules -name locktorture.ko)" ] || { echo "locktorture.ko not in the initramfs"; exit 77; }
secs=${SP_TORTURE_SECS:-${SP_SECS:-20}}
fail=0
for type in mutex_lock rwsem_lock; do
	before=$(dmesg | wc -l)
	modprobe locktorture torture_type=$type nwriters_stress=4 nreaders_stress=4 stat_interval=0 || { echo "modprobe $type failed"; fail=1; continue; }
	sleep 1
	tids=$(for p in /proc/[0-9]*; do case "$(cat $p/comm 2>/dev/null)" in lock_torture_*) echo ${p#/proc/} ;; esac; done)
	sp-ctl critical $tids > /tmp/ctl.out 2>&1 || { cat /tmp/ctl.out; fail=1; }
	sp-ctl enable 1
	sleep $secs
	sp-ctl stats > /tmp/st.out
	sp-ctl enable 0
	sp-ctl critical
	modprobe -r locktorture || { echo "rmmod locktorture failed"; fail=1; }
	dmesg | tail -n +$((before + 1)) > /tmp/lt.log
	res=$(grep -m1 "End of test" /tmp/lt.log)
	echo "$type: $res ($(echo $tids | wc -w) critical kthreads)"
	echo "${type}_critical $(echo $tids | wc -w)" >> "$SPTEST_METRICS"
	echo "${type}_grants $(sed -n 's/^grants //p' /tmp/st.out)" >> "$SPTEST_METRICS"
	echo "${type}_picks $(sed -n 's/^picks //p' /tmp/st.out)" >> "$SPTEST_METRICS"
	case $res in *SUCCESS*) ;; *) fail=1 ;; esac
done
exit $fail
