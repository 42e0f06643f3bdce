#!/usr/bin/env bats
# make install-tool (udev rule, systemd unit) and DKMS, on the host: the
# files as installed, the unit as systemd reads it, and a DKMS build of
# the module for every kernel, in private DKMS trees (nothing is installed
# on this machine).

TOP=$BATS_TEST_DIRNAME/../..

@test "install-tool: tool, man page, udev rule and unit, with the tool's path filled in" {
	stage=$BATS_TEST_TMPDIR/stage
	make -C "$TOP" -s install-tool DESTDIR="$stage" SBINDIR=/usr/sbin >/dev/null
	[ -x "$stage/usr/sbin/ssdcachectl" ]
	[ -f "$stage/usr/local/share/man/man8/ssdcachectl.8" ]
	rule=$stage/etc/udev/rules.d/69-ssdcache.rules
	unit=$stage/etc/systemd/system/ssdcache-assemble@.service
	grep -q 'IMPORT{program}="/usr/sbin/ssdcachectl udev-probe $devnode $links"' "$rule"
	grep -q 'RUN+="/usr/sbin/ssdcachectl assemble --background $devnode"' "$rule"
	grep -q '^ExecStart=/usr/sbin/ssdcachectl assemble /dev/%I$' "$unit"
	! grep -q @SBINDIR@ "$rule" "$unit"
}

@test "install-tool: systemd accepts the assembly unit without a warning" {
	stage=$BATS_TEST_TMPDIR/stage
	bin=$(cd "$TOP/build/userspace" && pwd)
	make -C "$TOP" -s install-tool DESTDIR="$stage" SBINDIR="$bin" >/dev/null
	run systemd-analyze verify --man=no \
		"$stage/etc/systemd/system/ssdcache-assemble@sdb.service"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ -z "$output" ] || { echo "$output"; false; }
}

@test "dkms: dkms.conf's version is the tool's; the staged sources build for every kernel" {
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$TOP/dkms.conf")
	[[ "$("$TOP/build/userspace/ssdcachectl" version)" == "ssdcachectl $ver "* ]]
	t=$BATS_TEST_TMPDIR
	make -C "$TOP" -s dkms-install DESTDIR="$t/stage" >/dev/null
	[ -f "$t/stage/usr/src/ssdcache-$ver/dkms.conf" ]
	[ -f "$t/stage/usr/src/ssdcache-$ver/Kbuild" ]
	mkdir -p "$t/tree" "$t/inst"
	kernels=$("$TOP/scripts/kernels.sh")
	[ -n "$kernels" ]
	for k in $kernels; do
		dkms --dkmstree "$t/tree" --sourcetree "$t/stage/usr/src" --installtree "$t/inst" \
			build "ssdcache/$ver" -k "$k" >"$t/dkms-$k.log" 2>&1 ||
			{ tail -n 30 "$t/dkms-$k.log"; false; }
		ko=$(find "$t/tree/ssdcache/$ver/$k" -name 'dm-ssdcache.ko*' | head -n 1)
		[ -n "$ko" ] || { echo "no module built for $k"; false; }
		[[ "$(modinfo -F vermagic "$ko")" == "$k "* ]] || { modinfo "$ko"; false; }
	done
}
