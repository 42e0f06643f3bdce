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
#   make install         module + tool on this machine
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

TOOL := build/userspace/ssdcachectl
TOOL_SRCS := $(wildcard userspace/*.c)
TOOL_HDRS := $(wildcard userspace/*.h) include/ssdcache_format.h

.PHONY: all modules selftest-modules sparse checkpatch tool check demo deps install clean

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

deps:
	scripts/deps.sh

check: deps
	scripts/check.sh

demo: deps
	scripts/demo.sh

# make install [KVER=<release>] [DESTDIR=<staging dir>]: the module for the
# running kernel (or KVER) into /lib/modules/<release>/updates, and the tool.
INSTALL_KVER := $(if $(filter command line,$(origin KVER)),$(KVER),$(shell uname -r))

install: tool
	scripts/build-module.sh $(INSTALL_KVER)
	install -D -m 644 build/$(INSTALL_KVER)/dm-ssdcache.ko \
		$(DESTDIR)/lib/modules/$(INSTALL_KVER)/updates/dm-ssdcache.ko
	$(if $(DESTDIR),,depmod -a $(INSTALL_KVER))
	install -D -m 755 $(TOOL) $(DESTDIR)$(SBINDIR)/ssdcachectl
	install -D -m 644 Documentation/ssdcachectl.8 $(DESTDIR)$(MANDIR)/man8/ssdcachectl.8

clean:
	rm -rf build
