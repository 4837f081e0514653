# Overhead: an uncontended kernel-mutex loop, a pipe wakeup ping-pong, an
# uncontended FUTEX_WAKE and a two-thread futex ping-pong (plain and with
# owner hints), without superpass.ko, then loaded and enabled with one
# (sleeping) critical thread registered, as on a phone where the UI thread is
# always registered. The restricted hooks cannot be detached, so "not loaded"
# runs come first (after a warm-up); then loaded runs alternate enabled /
# disabled. Ratios: median(loaded, enabled) / median(not loaded), and
# median(enabled) / median(disabled), 5 runs each. sp-overhead prints ns per
# iteration. Informational: passes if it ran.
#@boot sp-overhead  (measures before superpass.ko is loaded: its own VM)
runs=5
benches="mutex:20000 pingpong:5000 futexwake:50000 futexpp:5000 futexpp-hint:5000"
med() { tr ' ' '\n' | grep . | sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
[ -e /dev/superpass ] && { echo "superpass.ko already loaded"; exit 1; }
# Each run appends one value per benchmark to /tmp/ov.<phase>.<bench>.
run_all() {
	for b in $benches; do
		v=$(sp-overhead "${b%%:*}" "${b##*:}") || exit 1
		echo "$v" >> "/tmp/ov.$1.${b%%:*}"
	done
}
rm -f /tmp/ov.*
# Warm-up (TCG translates code on first use; the first runs after boot are slow).
for i in 1 2 3; do run_all warm; done
for i in $(seq $runs); do run_all base; done
insmod /lib/modules/sp/superpass.ko || exit 1
for i in 1 2; do run_all warm; done
sleep 1000 & crit=$!
sp-ctl critical $crit || exit 1
for i in $(seq $runs); do
	sp-ctl enable 1
	run_all on
	sp-ctl enable 0
	run_all off
done
kill $crit
for b in $benches; do
	n=${b%%:*}
	key=$(echo "$n" | tr '-' '_')
	bm=$(med < "/tmp/ov.base.$n"); om=$(med < "/tmp/ov.on.$n"); fm=$(med < "/tmp/ov.off.$n")
	echo "$n ns: not loaded [$(tr '\n' ' ' < /tmp/ov.base.$n)] enabled [$(tr '\n' ' ' < /tmp/ov.on.$n)] disabled [$(tr '\n' ' ' < /tmp/ov.off.$n)]"
	# Within the loaded phase, enabled and disabled runs alternate, so host noise
	# (TCG on a shared machine) hits both alike: the more robust figure.
	echo "  median ratio enabled / not loaded $(ratio $om $bm), enabled / disabled $(ratio $om $fm)"
	cat >> "$SPTEST_METRICS" <<M
${key}_ns_not_loaded $bm
${key}_ns_enabled $om
${key}_ns_disabled $fm
${key}_ratio $(ratio $om $bm)
${key}_ratio_vs_disabled $(ratio $om $fm)
M
done
