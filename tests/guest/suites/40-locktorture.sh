# locktorture (in-tree module) stresses mutex and rwsem with the hooks attached.
#@boot hooktest  (sp_hooktest.ko pins the restricted hooks: keep these in their own VM)
modprobe -n locktorture 2>/dev/null || [ -n "$(find /lib/modules -name locktorture.ko)" ] || { echo "locktorture.ko not in the initramfs"; exit 77; }
fail=0
for type in mutex_lock rwsem_lock; do
	before=$(dmesg | wc -l)
	modprobe locktorture torture_type=$type nwriters_stress=2 nreaders_stress=2 stat_interval=0 || { echo "modprobe locktorture $type failed"; fail=1; continue; }
	sleep 4
	modprobe -r locktorture || { echo "rmmod locktorture failed"; fail=1; }
	dmesg | tail -n +$((before + 1)) > /tmp/lt.log
	res=$(grep -m1 "End of test" /tmp/lt.log)
	echo "$type: $res"
	w=$(grep -m1 "Writes:" /tmp/lt.log | sed -n 's/.*Writes: *Total: *\([0-9]*\).*/\1/p')
	echo "${type}_writes ${w:-0}" >> "$SPTEST_METRICS"
	case $res in *SUCCESS*) ;; *) fail=1 ;; esac
done
exit $fail
