# shellcheck shell=bash
# Boot-time assembly in the guest. virtme-ng gives the guest its own
# writable layer over the host's /etc and /usr (overlayfs over tmpfs:
# nothing reaches the host), so boot_install installs the tool, the udev
# rule and the systemd unit with `make install-tool` exactly as on a real
# machine; udevd then runs the rule for every device that appears.
# boot_uninstall removes them again.

boot_install() {
	[ -n "${SSDCACHE_RESULTS:-}" ] || { echo "boot_install: guest only" >&2; return 1; }
	make -C "$SSDCACHE_TOP" -s install-tool >/dev/null 2>&1 || return 1
	[ -x /usr/local/sbin/ssdcachectl ] && [ -f /etc/udev/rules.d/69-ssdcache.rules ] || return 1
	udevadm control --reload
}

boot_uninstall() {
	rm -f /etc/udev/rules.d/69-ssdcache.rules /etc/systemd/system/ssdcache-assemble@.service \
		/usr/local/sbin/ssdcachectl /usr/local/share/man/man8/ssdcachectl.8
	rm -rf /etc/ssdcache
	udevadm control --reload
}

# wait_assembled NAME: waits (up to a minute) for udev to assemble NAME.
wait_assembled() {
	local i
	for i in $(seq 1 600); do
		[ -b "/dev/mapper/$1" ] && dmsetup status "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "wait_assembled: /dev/mapper/$1 did not appear; kernel log tail:" >&2
	dmesg | tail -n 20 >&2
	return 1
}
