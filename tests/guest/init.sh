#!/bin/busybox sh
# SuperPass guest /init: mounts the pseudo filesystems, runs the tests listed
# in /etc/sptest.list (files of /tests) and reports each one on the second
# serial port (ttyS1; the kernel console has ttyS0 to itself) as
#   SPTEST {"name":..,"status":"pass|fail|skip","duration_ms":..,"metrics":{..}}
# then prints "SPGUEST done" and reboots (QEMU runs with -no-reboot, so it
# exits). The host scans the kernel console (ttyS0) for oopses and warnings.
#
# Test contract (tests/guest/suites/NN-name.sh, run with busybox sh):
#   exit 0 = pass, 77 = skip, anything else = fail;
#   write metrics as "key value" lines to the file $SPTEST_METRICS
#   (numbers become JSON numbers, anything else a JSON string);
#   stdout/stderr are shown on the console prefixed with [name].
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /tmp /dev/pts
mount -t tmpfs tmpfs /tmp
# The initramfs root comes up world-writable; config loaders (rsb_hub) rightly refuse that.
chmod 755 /
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# The host's folder for ftrace captures (virtio-9p, xtask's share_dir): a serial port under TCG
# carries about 150 KB/s. Anyone may write there, as the programs run under other uids too.
mkdir -p /sptrace
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 sptrace /sptrace 2>/dev/null; then
	chmod 1777 /sptrace
else
	rmdir /sptrace
fi
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

# Results go to ttyS1, so kernel messages on ttyS0 never interleave with them.
# arm64's virt machine has one UART (ttyAMA0, the kernel console): results go
# to its virtio console, hvc0.
if [ -c /dev/ttyS1 ]; then exec > /dev/ttyS1 2>&1
elif [ -c /dev/hvc0 ]; then exec > /dev/hvc0 2>&1
fi

# Milliseconds since boot (10 ms resolution).
ms() {
	read -r up _ < /proc/uptime
	frac=${up#*.}; frac=${frac#0}
	echo $(( ${up%.*} * 1000 + frac * 10 ))
}

json_escape() {
	printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/	/ /g'
}

# "key value" lines -> "key":value,... (numbers unquoted)
metrics_json() {
	first=1
	while read -r k v; do
		[ -n "$k" ] || continue
		if [ $first = 1 ]; then first=0; else printf ','; fi
		if echo "$v" | grep -Eq '^-?[0-9]+(\.[0-9]+)?$'; then
			printf '"%s":%s' "$(json_escape "$k")" "$v"
		else
			printf '"%s":"%s"' "$(json_escape "$k")" "$(json_escape "$v")"
		fi
	done < "$1"
}

TEST_TIMEOUT=$(sed -n 's/.*sptest.timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$TEST_TIMEOUT" ] || TEST_TIMEOUT=300

# The CPU capacities the kernel uses (arch_scale_cpu_capacity(); arm64 reads them from the
# device tree), where it exports them.
caps=$(cat /sys/devices/system/cpu/cpu[0-9]*/cpu_capacity 2> /dev/null | tr '\n' , | sed 's/,$//')
echo "SPGUEST boot cpus=$(nproc) release=$(uname -r) uptime_ms=$(ms) arch=$(uname -m)${caps:+ capacities=$caps}"

for t in $(cat /etc/sptest.list); do
	name=${t%.sh}; name=${name#[0-9][0-9]-}
	m=/tmp/metrics.$name
	: > "$m"
	echo "SPRUN $name"
	start=$(ms)
	SPTEST_METRICS=$m SPTEST_NAME=$name timeout -s KILL "$TEST_TIMEOUT" sh "/tests/$t" > "/tmp/out.$name" 2>&1
	rc=$?
	end=$(ms)
	sed "s/^/[$name] /" "/tmp/out.$name"
	case $rc in
		0) status=pass ;;
		77) status=skip ;;
		*) status=fail; echo "exit_code $rc" >> "$m" ;;
	esac
	echo "SPTEST {\"name\":\"$name\",\"status\":\"$status\",\"duration_ms\":$((end - start)),\"metrics\":{$(metrics_json "$m")}}"
done

echo "SPGUEST done"
sync
reboot -f
