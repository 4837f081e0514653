# The capacities superpass.ko is loaded with by the suites that need a fast CPU
# 0 and a slower CPU 1. Where the kernel's own capacities already say so
# (arm64: capacity-dmips-mhz in the guest's device tree), the module uses
# arch_scale_cpu_capacity() and the kernel places and migrates by the same
# values; elsewhere (x86: flat) capacity=1024,512 tells only the engine.
# Sets sp_capacity (the insmod argument, maybe empty) and records
# kernel_capacities (the kernel's CPU 0 and CPU 1, or "flat") in the metrics.
sp_capacity="capacity=1024,512"
kernel_capacities=flat
c0=$(cat /sys/devices/system/cpu/cpu0/cpu_capacity 2> /dev/null)
c1=$(cat /sys/devices/system/cpu/cpu1/cpu_capacity 2> /dev/null)
if [ -n "$c0" ] && [ -n "$c1" ] && [ "$c1" -lt "$c0" ]; then
	sp_capacity=
	kernel_capacities="$c0,$c1"
fi
echo "kernel_capacities $kernel_capacities" >> "$SPTEST_METRICS"
