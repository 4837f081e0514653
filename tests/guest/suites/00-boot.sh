# The guest booted with 2 CPUs on the patched kernel, with vendor hooks.
cpus=$(nproc)
echo "cpus $cpus" >> "$SPTEST_METRICS"
read -r up _ < /proc/uptime
echo "uptime_s $up" >> "$SPTEST_METRICS"
echo "release $(uname -r)" >> "$SPTEST_METRICS"
[ "$cpus" = 2 ] || { echo "expected 2 CPUs, got $cpus"; exit 1; }
grep -q ' android_rvh_probe_register$' /proc/kallsyms || { echo "no android_rvh_probe_register in kallsyms"; exit 1; }
n=$(grep -c ' __tracepoint_android_[rv]*h_' /proc/kallsyms)
echo "hook_tracepoints $n" >> "$SPTEST_METRICS"
echo "kernel has $n vendor hook tracepoints"
[ "$n" -ge 22 ] || { echo "expected at least 22 vendor hooks"; exit 1; }
