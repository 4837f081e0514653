# Misfit blockers on an asymmetric machine: CPU 0 fast, CPU 1 slower. On arm64
# the guest's device tree says so and the kernel uses the same capacities; on
# x86 superpass.ko is loaded with capacity=1024,512 and the kernel's own view
# stays symmetric, so it never moves a task for it (lib/capacity.sh). A
# boosted blocker running on CPU 1 must be marked misfit from the kernel's
# update_misfit_status() (misfit_marks > 0, both misfit hooks attached), and
# SuperPass must still cut the inversion's p99.9 wait by >= 72%.
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot sp-misfit  (the capacities are a load parameter)
fail=0
. /lib/sptest/capacity.sh
insmod /lib/modules/sp/superpass.ko $sp_capacity || { echo "FAIL superpass.ko did not load"; exit 1; }
insmod /lib/modules/sp/sp_testdev.ko || { echo "FAIL sp_testdev.ko did not load"; exit 1; }
sp-ctl stats | grep -q '^mechanism misfit$' || { echo "FAIL the misfit mechanism is not active"; fail=1; }
sp-inversion -l mutex -m off,on,off_n10,on_n10 -d ${SP_MISFIT_SECS:-${SP_SECS:-6}} -H 2 -w 500 -o 100 -p 1000 -R 72 > /tmp/misfit.out 2>&1 || fail=1
grep -v '^M ' /tmp/misfit.out
grep '^M ' /tmp/misfit.out | cut -c3- >> "$SPTEST_METRICS"
sp-ctl stats > /tmp/misfit.stats
m=$(sed -n 's/^misfit_marks //p' /tmp/misfit.stats)
v=$(sed -n 's/^migrate_vetoes //p' /tmp/misfit.stats)
echo "misfit_marks ${m:-0}" >> "$SPTEST_METRICS"
echo "migrate_vetoes ${v:-0}" >> "$SPTEST_METRICS"
[ "${m:-0}" -gt 0 ] || { echo "FAIL no boosted blocker on the slow CPU was marked misfit"; fail=1; }
exit $fail
