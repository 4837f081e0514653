# Overhead on 2 vCPUs: seven loops (kernel mutex, pipe ping-pong, page fault,
# rwsem read lock, FUTEX_WAKE, futex ping-pong plain and with owner hints) and
# a mixed workload's system-wide CPU time, without superpass.ko, then loaded
# and enabled (reader probes attached; then on demand, detached; then engaged), and loaded and disabled. The method and the metrics:
# tests/guest/lib/overhead.sh. The ratios are informational; it fails if the
# reader probes are not attached (enabled, engaged) or detached (on demand) when they
# should be.
#@boot sp-overhead  (measures before superpass.ko is loaded: its own VM)
#@machine cpus=2 icount
. /lib/sptest/overhead.sh
