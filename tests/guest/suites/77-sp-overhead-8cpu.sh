# Overhead on 8 vCPUs for CPUs with no fast-track work while others have some:
# a mutex inversion keeps a blocker boosted on CPUs 0-1 (sp-overhead boostload,
# confined there with taskset; the budget and the CPU share at their largest,
# so that it stays boosted) while a pipe ping-pong (two context switches per
# round trip, every scheduler hook) runs on each of CPUs 2-7. The same load
# runs without superpass.ko, loaded and enabled with its waiter not registered
# (idle: nothing boosted), and loaded with its waiter registered critical
# (boosting), so only the module differs. Under QEMU's instruction counting the
# guest clock counts executed instructions: host load cannot move the ratios.
#
# Metrics: pingpong8_ns_{not_loaded,idle,boosting} (medians over $runs runs of
# the mean round trip of the six CPUs), pingpong8_ratio (boosting / not
# loaded, goal <= 1.02, informational), pingpong8_ratio_vs_idle (boosting /
# idle: what boosting elsewhere costs these CPUs), the same ratios of the
# phases' means with their 95% intervals (pingpong8_ratio_{mean,lo,hi},
# pingpong8_ratio_vs_idle_{mean,lo,hi}), fast_track_pct (fast-tracked
# CPU time of CPUs 0-1 while boosting), and from one more counted run, per CPU
# group, the pick probe's calls and how many took the engine lock
# (pick_calls): picks_far, picks_far_engine (CPUs 2-7) and picks_near,
# picks_near_engine (CPUs 0-1), and how often any hook or ioctl took the
# engine lock there (engine_locks_far, engine_locks_near); and the interrupts
# CPUs 2-7 took per round trip in each phase (irqs_per_rt_*, of them reschedule
# IPIs res_per_rt_*): work the module may send them from afar; and the idle
# ticks of CPUs 0-1 (idle_ticks_near_*): under one instruction clock, how busy
# they are sets how slow the far CPUs' clock runs.
# Checks (the suite fails otherwise): the waits of the loaded runs were helped
# (grants grew), at most a quarter of the picks on CPUs 2-7 took the engine
# lock, and those CPUs took it at most a quarter as often as they picked, from
# any hook (see the checks).
#@boot sp-overhead-8cpu  (measures before superpass.ko is loaded: its own VM)
#@machine cpus=8 icount
runs=31
n=5000
med() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
[ -e /dev/superpass ] && { echo "superpass.ko already loaded"; exit 1; }
[ "$(nproc)" -ge 8 ] || { echo "needs 8 CPUs, has $(nproc)"; exit 1; }
insmod /lib/modules/sp/sp_testdev.ko || exit 1
# One ping-pong per CPU 2-7 at once; prints the mean round trip (ns).
pp_all() {
	pids=""
	for c in 2 3 4 5 6 7; do
		SP_OVERHEAD_CPU=$c sp-overhead pingpong $n > /tmp/pp.$c & pids="$pids $!"
	done
	for p in $pids; do wait "$p" || exit 1; done
	cat /tmp/pp.2 /tmp/pp.3 /tmp/pp.4 /tmp/pp.5 /tmp/pp.6 /tmp/pp.7 |
		awk '{ t += $1 } END { printf "%.1f\n", t / NR }'
}
# Interrupts CPUs 2-7 have taken, of the kind $1 (a /proc/interrupts row name
# such as RES:), or of every kind without $1.
irqs_far() {
	awk -v k="$1" 'NR > 1 && (k == "" || $1 == k) {
		for (i = 4; i <= 9; i++) if ($i ~ /^[0-9]+$/) t += $i
	} END { print t + 0 }' /proc/interrupts
}
# Idle ticks of CPUs 0-1 ($1 = near) or 2-7 (far), from /proc/stat.
idle_ticks() {
	awk -v g="$1" '$1 ~ /^cpu[0-9]/ {
		c = substr($1, 4) + 0
		if ((g == "near") == (c < 2)) t += $5 + $6
	} END { print t + 0 }' /proc/stat
}
# Runs $runs ping-pong rounds under the boosting load; appends to /tmp/o8.$1,
# and the interrupts CPUs 2-7 took meanwhile (all, reschedule IPIs) to
# /tmp/o8.irq.$1.
phase() {
	taskset -c 0,1 sp-overhead boostload 100000 $3 > /tmp/o8.load.$1 & load=$!
	sleep 1
	i0=$(irqs_far); r0=$(irqs_far RES:); n0=$(idle_ticks near); f0=$(idle_ticks far)
	for i in $(seq $runs); do pp_all >> "/tmp/o8.$1" || exit 1; done
	echo "$(( $(irqs_far) - i0 )) $(( $(irqs_far RES:) - r0 ))" \
		"$(( $(idle_ticks near) - n0 )) $(( $(idle_ticks far) - f0 ))" > /tmp/o8.irq.$1
	[ -n "$2" ] && $2
	kill "$load"
	wait "$load" 2> /dev/null
}
rm -f /tmp/o8.*
# Warm-up (TCG translates code on first use).
pp_all > /dev/null || exit 1
phase base
insmod /lib/modules/sp/superpass.ko || exit 1
pp_all > /dev/null || exit 1
calls=/sys/kernel/debug/superpass
[ -r $calls/pick_calls ] || { echo "no $calls/pick_calls (debugfs)"; exit 1; }
counter() { sp-ctl stats | awk -v k="$1" '$1 == k { print $2 }'; }
sp-ctl enable 1 || exit 1
sp-ctl set budget_ns=100000000 || exit 1
sp-ctl set throttle_max_pct=100 || exit 1
phase idle "" noreg
g0=$(counter grants); f0=$(counter fast_track_ns); t0=$(awk '{ print $1 }' /proc/uptime)
# One more round with the module counting its pick probe's calls per CPU.
counted() {
	echo 1 > $calls/probe_calls
	pp_all > /dev/null || exit 1
	echo 0 > $calls/probe_calls
	cat $calls/pick_calls > /tmp/o8.picks
}
phase boosting counted
g1=$(counter grants); f1=$(counter fast_track_ns); t1=$(awk '{ print $1 }' /proc/uptime)
cat /tmp/o8.picks
bm=$(med < /tmp/o8.base); im=$(med < /tmp/o8.idle); lm=$(med < /tmp/o8.boosting)
r=$(ratio "$lm" "$bm"); ri=$(ratio "$lm" "$im")
# The ratio of the phases' mean round trips with its 95% interval (delta
# method over the runs): the runs of one phase spread by +-15% under one
# instruction clock, so a goal of 2% needs its interval beside it.
mean_ci() {
	# busybox awk has no sqrt: Newton's method.
	awk -v a="$1" -v b="$2" 'function stats(f, m,   n, s, q, x) {
		while ((getline x < f) > 0) { n++; s += x; q += x * x }
		m[1] = s / n; m[2] = (q - s * s / n) / (n - 1) / n / (m[1] * m[1])
	}
	function root(x,   y, i) { y = x + 1; for (i = 0; i < 60; i++) y = (y + x / y) / 2; return y }
	BEGIN { stats(a, A); stats(b, B); r = A[1] / B[1]; h = 1.96 * r * root(A[2] + B[2])
		printf "%.3f %.3f %.3f\n", r, r - h, r + h }'
}
read -r rm rlo rhi <<EOF2
$(mean_ci /tmp/o8.boosting /tmp/o8.base)
EOF2
read -r rim rilo rihi <<EOF2
$(mean_ci /tmp/o8.boosting /tmp/o8.idle)
EOF2
ft=$(awk -v f=$((f1 - f0)) -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", f / ((b - a) * 2e9) * 100 }')
echo "ping-pong on CPUs 2-7 (ns per round trip): not loaded [$(tr '\n' ' ' < /tmp/o8.base)] idle [$(tr '\n' ' ' < /tmp/o8.idle)] boosting on CPUs 0-1 [$(tr '\n' ' ' < /tmp/o8.boosting)]"
echo "  median ratio boosting / not loaded $r (goal <= 1.02), boosting / idle $ri; grants while boosting: $((g1 - g0)), fast-tracked $ft% of CPUs 0-1"
echo "  ratio of the means, 95% interval: boosting / not loaded $rm [$rlo, $rhi], boosting / idle $rim [$rilo, $rihi] ($runs runs each)"
# Interrupts per round trip on CPUs 2-7 ($runs rounds of $n round trips on 6 CPUs).
per_rt() { awk -v a="$1" -v n=$((runs * n * 6)) 'BEGIN { printf "%.4f", a / n }'; }
for p in base idle boosting; do
	read -r all res nidle fidle < /tmp/o8.irq.$p
	echo "  interrupts on CPUs 2-7 while $p: $all ($res reschedule IPIs), $(per_rt "$all") per round trip; idle ticks CPUs 0-1 $nidle, CPUs 2-7 $fidle"
	echo "idle_ticks_near_$p $nidle" >> "$SPTEST_METRICS"
	echo "irqs_per_rt_$p $(per_rt "$all")" >> "$SPTEST_METRICS"
	echo "res_per_rt_$p $(per_rt "$res")" >> "$SPTEST_METRICS"
done
far=$(awk 'NR > 1 && $1 >= 2 { t += $2 } END { print t + 0 }' /tmp/o8.picks)
far_e=$(awk 'NR > 1 && $1 >= 2 { t += $3 } END { print t + 0 }' /tmp/o8.picks)
near=$(awk 'NR > 1 && $1 < 2 { t += $2 } END { print t + 0 }' /tmp/o8.picks)
near_e=$(awk 'NR > 1 && $1 < 2 { t += $3 } END { print t + 0 }' /tmp/o8.picks)
far_l=$(awk 'NR > 1 && $1 >= 2 { t += $4 } END { print t + 0 }' /tmp/o8.picks)
near_l=$(awk 'NR > 1 && $1 < 2 { t += $4 } END { print t + 0 }' /tmp/o8.picks)
cat >> "$SPTEST_METRICS" <<M
pingpong8_ns_not_loaded $bm
pingpong8_ns_idle $im
pingpong8_ns_boosting $lm
pingpong8_ratio $r
pingpong8_ratio_vs_idle $ri
pingpong8_ratio_mean $rm
pingpong8_ratio_lo $rlo
pingpong8_ratio_hi $rhi
pingpong8_ratio_vs_idle_mean $rim
pingpong8_ratio_vs_idle_lo $rilo
pingpong8_ratio_vs_idle_hi $rihi
grants_boosting $((g1 - g0))
fast_track_pct $ft
picks_far $far
picks_far_engine $far_e
picks_near $near
picks_near_engine $near_e
engine_locks_far $far_l
engine_locks_near $near_l
M
fails=0
[ $((g1 - g0)) -gt 0 ] || { echo "FAIL: nothing was granted on CPUs 0-1: the load did not boost"; fails=1; }
[ "$far" -gt 0 ] || { echo "FAIL: no pick counted on CPUs 2-7"; fails=1; }
# A far pick may take the engine lock only when the task it preempts shares a
# lane with the waiting critical thread (a filter's false positive, 1 in 64
# threads); every pick taking it is the regression this catches.
[ $((far_e * 4)) -le "$far" ] || { echo "FAIL: $far_e of $far picks on CPUs 2-7 took the engine lock"; fails=1; }
# Nor may anything else there: the ping-pong's own locks (the pipe's mutex)
# have no tracked wait on them, so their probes stay off the engine lock.
[ $((far_l * 4)) -le "$far" ] || { echo "FAIL: CPUs 2-7 took the engine lock $far_l times in $far picks"; fails=1; }
exit $fails
