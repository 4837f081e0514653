# Pushes: CPU 0 is the fast CPU and CPU 1 a slower one (the arm64 guest's
# device tree, or on x86 superpass.ko's capacity=1024,512 while the kernel's
# own view stays symmetric: lib/capacity.sh). Two
# hogs at nice 19 (background priority) keep both CPUs busy, so a blocker
# boosted on CPU 1 (where it starts: -B 1) has no idle faster CPU to be pulled to: the engine pushes it
# to CPU 0, displacing a hog, and the module's CPU stopper moves it there; when
# its boost ends it goes back. The same run is made first with push_min_prio at
# 140 (push to idle CPUs only: here, never), whose metrics are nopush_*. The
# engine's pushes and push_backs and the module's completed moves (debugfs
# probe_calls: move_done) must grow. CPU 0 is not really faster here (TCG runs
# every vCPU alike, whatever its capacity), so the waits can only show what a push costs (nopush_* against on*), never what it
# gains, and off is no inversion to cut (the blocker shares the hogs' nice 19):
# they are reported, with each wait over 16 ms itemized from its capture as in
# the other inversion tests, not judged. on_n10 runs the critical thread at
# nice -10, as Android runs the UI thread and RenderThread.
#@boot sp-push  (the capacities are a load parameter)
fail=0
. /lib/sptest/capacity.sh
insmod /lib/modules/sp/superpass.ko $sp_capacity || { echo "FAIL superpass.ko did not load"; exit 1; }
insmod /lib/modules/sp/sp_testdev.ko || { echo "FAIL sp_testdev.ko did not load"; exit 1; }
calls=/sys/kernel/debug/superpass/probe_calls
[ -w "$calls" ] || { echo "FAIL no $calls (debugfs)"; exit 1; }
# The critical thread stays on CPU 1: a running blocker is never pushed onto the CPU a
# critical thread's wait started on, so one whose waits the kernel kept on CPU 0 for a
# whole mode left nothing to push (the push count then hung on that placement).
args="-l mutex -d ${SP_PUSH_SECS:-6} -H 2 -n 19 -B 1 -C 1 -w 500 -o 100 -p 1000"

prio=$(sp-ctl get push_min_prio) || exit 1
sp-ctl set push_min_prio=140 || exit 1
sp-inversion $args -m on,on_n10 > /tmp/nopush.out 2>&1 || fail=1
sp-ctl set push_min_prio=$prio || fail=1
grep '^M ' /tmp/nopush.out | cut -c3- | sed 's/^/nopush_/' >> "$SPTEST_METRICS"
grep -E '^(M )?on(_n10)?_(p999_us|max_us) ' /tmp/nopush.out | sed 's/^M //; s/^/without pushes: /'

echo 1 > "$calls"
sp-inversion $args -m off,on,off_n10,on_n10 > /tmp/push.out 2>&1 || fail=1
done=$(awk '$1 == "move_done" { print $2 }' "$calls")
stale=$(awk '$1 == "move_stale" { print $2 }' "$calls")
stopper=$(awk '$1 == "move_stopper" { print $2 }' "$calls")
echo 0 > "$calls"
grep -v '^M ' /tmp/push.out
grep '^M ' /tmp/push.out | cut -c3- >> "$SPTEST_METRICS"
# Summed over on and on_n10 (the counters restart with each mode).
p=$(awk '$1 == "M" && $2 ~ /^on(_n10)?_pushes$/ { n += $3 } END { print n + 0 }' /tmp/push.out)
b=$(awk '$1 == "M" && $2 ~ /^on(_n10)?_push_backs$/ { n += $3 } END { print n + 0 }' /tmp/push.out)
for kv in "pushes ${p:-0}" "push_backs ${b:-0}" "move_done ${done:-0}" "move_stale ${stale:-0}" \
	  "move_stopper ${stopper:-0}"; do
	echo "$kv" >> "$SPTEST_METRICS"
	echo "$kv"
done
[ "${p:-0}" -gt 0 ] || { echo "FAIL no boosted blocker on the slow CPU was pushed"; fail=1; }
[ "${b:-0}" -gt 0 ] || { echo "FAIL no pushed task was sent back"; fail=1; }
[ "${done:-0}" -gt 0 ] || { echo "FAIL no task was moved"; fail=1; }
exit $fail
