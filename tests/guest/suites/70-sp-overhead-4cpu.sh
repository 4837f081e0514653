# Overhead on 4 vCPUs: what sp-overhead measures, with twice the CPUs (the
# select probe's idle scan and the cross-CPU kicks grow with them).
# tests/guest/lib/overhead.sh has the method and the metrics.
#@boot sp-overhead-4cpu  (measures before superpass.ko is loaded: its own VM)
#@machine cpus=4 icount
. /lib/sptest/overhead.sh
