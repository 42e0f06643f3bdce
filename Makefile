# SPDX-License-Identifier: GPL-2.0
# ssdcache top-level Makefile.
#
#   make                 module for every installed kernel + ssdcachectl
#   make modules KVER=X  module for one kernel (X = a /lib/modules entry)
#   make sparse          sparse (C=2) over the module, every kernel
#                        (`make C=2` does the same as part of the build)
#   make checkpatch      kernel style (checkpatch.pl --strict) over the module
#   make check           everything, host tests, one VM per kernel
#   make demo            the demo: a cache over simulated HDD + SSD in a VM
#   make bench           benchmarks against the raw devices and the peers
#   make install         module, tool, man page, udev rule, systemd unit
#   make install-tool    the same without the module
#   make dkms-install    the module's sources under DKMS, for every kernel
#   make fuzz            libFuzzer on the metadata readers (FUZZ_SECONDS=60)
#
# Kbuild (the kernel's build system) reads ./Kbuild, not this file.

KERNELS := $(shell scripts/kernels.sh 2>/dev/null)
KVER ?= $(KERNELS)

CC ?= cc
USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude -D_GNU_SOURCE
USER_LDLIBS := -ldevmapper -lblkid

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UDEVRULESDIR ?= /etc/udev/rules.d
SYSTEMDUNITDIR ?= /etc/systemd/system
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

TOOL := build/userspace/ssdcachectl
TOOL_SRCS := $(wildcard userspace/*.c)
TOOL_HDRS := $(wildcard userspace/*.h) include/ssdcache_format.h

.PHONY: all modules selftest-modules sparse checkpatch tool check check-debug demo bench stress deps install \
	install-tool dkms-install fuzz clean

all: modules tool

# `make C=1` or `make C=2` runs sparse over the module, as in the kernel.
SPARSE_FLAG := $(if $(filter 1 2,$(C)),--sparse)

modules:
	@[ -n "$(KVER)" ] || { echo "no kernel with both /boot image and headers: run scripts/deps.sh"; exit 1; }
	@for k in $(KVER); do scripts/build-module.sh $$k $(SPARSE_FLAG) || exit 1; done

selftest-modules:
	@for k in $(KVER); do scripts/build-module.sh $$k --selftest || exit 1; done

sparse:
	@for k in $(KVER); do scripts/build-module.sh $$k --sparse || exit 1; done

checkpatch:
	scripts/checkpatch.sh

tool: $(TOOL)

$(TOOL): $(TOOL_SRCS) $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Iuserspace -o $@ $(TOOL_SRCS) $(USER_LDLIBS)

# The metadata readers under libFuzzer, ASan and UBSan (tests/fuzz/); in
# this build every block's checksum counts as right, so that mutations
# reach the rules behind it.
FUZZER := build/fuzz/fuzz_check
FUZZ_SECONDS ?= 60
FUZZ_SRCS := tests/fuzz/fuzz_check.c userspace/check.c userspace/disk.c

$(FUZZER): $(FUZZ_SRCS) $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Wall -Wextra -Werror -Iinclude -Iuserspace -D_GNU_SOURCE \
		-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ $(FUZZ_SRCS) -lblkid

# Fuzzes for FUZZ_SECONDS from the seeds in tests/fuzz/corpus; what it
# finds new goes to build/fuzz/corpus, a crash or a hang to build/fuzz/.
fuzz: $(FUZZER)
	@mkdir -p build/fuzz/corpus
	$(FUZZER) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -max_len=65536 \
		-artifact_prefix=build/fuzz/ -print_final_stats=1 build/fuzz/corpus tests/fuzz/corpus

deps:
	scripts/deps.sh

check: deps
	scripts/check.sh

demo: deps
	scripts/demo.sh

# make bench [BENCH_SECS=20]: one VM per kernel, results in build/bench/.
bench: deps
	scripts/bench.sh

# make check-debug: the guest suites on a debug 6.1 kernel (built once).
check-debug: deps
	scripts/check-debug.sh

# make stress [STRESS_SECS=600] [STRESS_RUN_SECS=0]: the randomized run, again
# and again for STRESS_SECS in a VM per kernel (scripts/stress.sh).
stress: deps
	STRESS_SECS=$(or $(STRESS_SECS),600) STRESS_RUN_SECS=$(or $(STRESS_RUN_SECS),0) scripts/stress.sh

# make install [KVER=<release>] [DESTDIR=<staging dir>]: the module for the
# running kernel (or KVER) into /lib/modules/<release>/updates, and the tool.
INSTALL_KVER := $(if $(filter command line,$(origin KVER)),$(KVER),$(shell uname -r))

install: install-tool
	scripts/build-module.sh $(INSTALL_KVER)
	install -D -m 644 build/$(INSTALL_KVER)/dm-ssdcache.ko \
		$(DESTDIR)/lib/modules/$(INSTALL_KVER)/updates/dm-ssdcache.ko
	$(if $(DESTDIR),,depmod -a $(INSTALL_KVER))

# The tool, its man page, and boot-time assembly (udev rule, systemd unit).
install-tool: tool
	install -D -m 755 $(TOOL) $(DESTDIR)$(SBINDIR)/ssdcachectl
	install -D -m 644 Documentation/ssdcachectl.8 $(DESTDIR)$(MANDIR)/man8/ssdcachectl.8
	mkdir -p $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' packaging/69-ssdcache.rules.in \
		>$(DESTDIR)$(UDEVRULESDIR)/69-ssdcache.rules
	sed 's|@SBINDIR@|$(SBINDIR)|g' packaging/ssdcache-assemble@.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/ssdcache-assemble@.service
	$(if $(DESTDIR),,-udevadm control --reload)
	$(if $(DESTDIR),,-systemctl daemon-reload 2>/dev/null)

# make dkms-install [DESTDIR=<staging dir>]: the sources to
# /usr/src/ssdcache-$(VERSION); without DESTDIR, also dkms add, then build
# and install for every kernel that has headers (DKMS does later ones).
DKMS_SRC = $(DESTDIR)/usr/src/ssdcache-$(VERSION)
dkms-install:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	cp -r Kbuild dkms.conf module include $(DKMS_SRC)/
	$(if $(DESTDIR),,-dkms remove ssdcache/$(VERSION) --all >/dev/null 2>&1)
	$(if $(DESTDIR),,dkms add ssdcache/$(VERSION))
	$(if $(DESTDIR),,for k in $(KERNELS); do dkms install ssdcache/$(VERSION) -k $$k || exit 1; done)

clean:
	rm -rf build
