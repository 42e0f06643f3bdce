#!/usr/bin/env bash
# Install everything ssdcache needs to build, test and demo, on Debian 12.
# Idempotent: a second run checks and returns quickly.
set -euo pipefail

STAMP_DIR=${SSDCACHE_STATE:-/var/lib/ssdcache-dev}
BPO_LIST=/etc/apt/sources.list.d/ssdcache-bookworm-backports.sources

APT_PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves
	linux-image-amd64 linux-headers-amd64
	qemu-system-x86 python3-pip python3-venv
	fio bats sparse dmsetup libdevmapper-dev libblkid-dev kmod bcache-tools linux-source-6.1
	xfsprogs e2fsprogs util-linux jq busybox-static udev tmux python3-prometheus-client man-db
	clang llvm lld libclang-rt-14-dev dkms openssl systemd
	postgresql python3-matplotlib mariadb-server sysbench python3-docutils
	libseccomp-dev libcap-ng-dev bash-builtins
)
BPO_PKGS=(linux-image-amd64 linux-headers-amd64)

log() { printf 'deps: %s\n' "$*"; }

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: must run as root (apt-get install)" >&2
		exit 1
	fi
}

# The mirror this machine already uses for bookworm, so no host is hard-coded.
debian_mirror() {
	local uri
	uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	if [ -z "$uri" ]; then
		uri=$(awk '$1 == "deb" && $3 ~ /^bookworm/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
	fi
	[ -n "$uri" ] || { echo "deps: cannot find the Debian mirror in apt sources" >&2; exit 1; }
	printf '%s\n' "$uri"
}

add_backports() {
	[ -f "$BPO_LIST" ] && return 1
	grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 1
	log "adding bookworm-backports"
	cat >"$BPO_LIST" <<EOT
Types: deb
URIs: $(debian_mirror)
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	return 0
}

missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || echo "$p"
	done
}

bpo_kernel_installed() {
	ls /boot/vmlinuz-6.1[2-9]* >/dev/null 2>&1 && ls -d /usr/src/linux-headers-6.1[2-9]*-amd64 >/dev/null 2>&1
}

VNG_VERSION=1.42
VENV=/opt/ssdcache-dev/venv

CHECKPATCH_DIR=/opt/ssdcache-dev/checkpatch

# checkpatch.pl and its data files, from Debian's linux-source-6.1.
install_checkpatch() {
	[ -f "$CHECKPATCH_DIR/scripts/checkpatch.pl" ] && return 0
	log "extracting checkpatch.pl from linux-source-6.1"
	mkdir -p "$CHECKPATCH_DIR"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$CHECKPATCH_DIR" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
}

have_vng() { [ -x "$VENV/bin/vng" ] && [ -e /usr/local/bin/vng ] && [ -e /usr/local/bin/virtme-run ]; }

# virtme-ng from PyPI, pinned, in its own venv (Debian's python refuses
# system-wide pip installs), linked into /usr/local/bin.
install_vng() {
	log "installing virtme-ng $VNG_VERSION from PyPI"
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q "virtme-ng==$VNG_VERSION"
	local f
	for f in "$VENV"/bin/vng "$VENV"/bin/virtme*; do
		ln -sfn "$f" "/usr/local/bin/$(basename "$f")"
	done
}

VIRTIOFSD_VERSION=1.14.0
VIRTIOFSD_DIR=/opt/ssdcache-dev/virtiofsd

have_virtiofsd() { [ -x "$VIRTIOFSD_DIR/bin/virtiofsd" ] && [ -e /usr/local/bin/virtiofsd ]; }

# virtiofsd (the Rust daemon; Debian 12 has only QEMU's old C one, which
# vng does not use), built from crates.io with the cargo this machine
# has, pinned, linked into /usr/local/bin. vng then shares the host's
# root with the guest over virtio-fs, with the guest caching files and
# lookups; over 9p, its fallback, every lookup is a round trip to QEMU,
# and a process start in the guest costs about twice as long. Without
# cargo, or if the build fails, the guests use 9p: slower, same results.
install_virtiofsd() {
	local cargo
	cargo=$(command -v cargo || true)
	[ -n "$cargo" ] || [ ! -x "${HOME:-/root}/.cargo/bin/cargo" ] || cargo=${HOME:-/root}/.cargo/bin/cargo
	if [ -z "$cargo" ]; then
		log "no cargo: guests will mount the host's root over 9p (slower)"
		return 0
	fi
	log "building virtiofsd $VIRTIOFSD_VERSION from crates.io"
	local out
	out=$(mktemp)
	if "$cargo" install --quiet --locked --root "$VIRTIOFSD_DIR" "virtiofsd@$VIRTIOFSD_VERSION" >"$out" 2>&1 &&
		"$VIRTIOFSD_DIR/bin/virtiofsd" --version >/dev/null 2>&1; then
		ln -sfn "$VIRTIOFSD_DIR/bin/virtiofsd" /usr/local/bin/virtiofsd
	else
		tail -n 20 "$out" >&2
		log "virtiofsd did not build: guests will mount the host's root over 9p (slower)"
	fi
	rm -f "$out"
}

# apt is chatty; keep its output for when it fails.
apt_quiet() {
	local out
	out=$(mktemp)
	if ! DEBIAN_FRONTEND=noninteractive apt-get "$@" >"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		echo "deps: apt-get $* failed" >&2
		exit 1
	fi
	rm -f "$out"
}

main() {
	need_root
	local updated=0 missing
	if add_backports; then
		apt_quiet update
		updated=1
	fi
	missing=$(missing_pkgs "${APT_PKGS[@]}")
	if [ -n "$missing" ] || ! bpo_kernel_installed; then
		[ "$updated" = 1 ] || apt_quiet update
		if [ -n "$missing" ]; then
			log "installing:" $missing
			# shellcheck disable=SC2086
			apt_quiet install -y --no-install-recommends $missing
		fi
		if ! bpo_kernel_installed; then
			log "installing the 6.12 LTS kernel from bookworm-backports"
			apt_quiet install -y --no-install-recommends -t bookworm-backports "${BPO_PKGS[@]}"
		fi
	fi
	have_vng || install_vng
	have_virtiofsd || install_virtiofsd
	install_checkpatch
	mkdir -p "$STAMP_DIR"
	log "ok: kernels: $(cd /boot && ls vmlinuz-* 2>/dev/null | sed 's/vmlinuz-//' | tr '\n' ' ')"
}

main "$@"
