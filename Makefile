# unet-xdp build.  `make` builds everything into $(BUILD); `make check` and
# `make demo` first install missing Debian packages (scripts/install-deps.sh).
# SAN=1 builds with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-san/.  `make tsan` builds the two-thread TCP test program
# (tests/tools/unet-tcp-threads.c), unet-run with its preload library and
# the programs run under it (tests/tools/socket-threads.c, threads;
# tests/tools/fork-relay.c, forks), and the library objects they need,
# with ThreadSanitizer into build-tsan/ (SAN=tsan; nothing else is built
# there).

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(SAN),tsan)
BUILD ?= build-tsan
# -Wno-tsan: gcc notes that TSan does not model atomic_thread_fence (used
# only on the path of unetd's emulated endpoints, which this build does
# not test).
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
else
BUILD ?= build
SANFLAGS :=
endif

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
# unetd's unit goes where systemd (and debhelper in Debian 12) look, and
# its policy where the daemon reads it (DEFAULT_POLICY in daemon/main.c),
# whatever PREFIX is.
SYSTEMDUNITDIR ?= /lib/systemd/system
# The provider goes where the installed libfabric loads providers from,
# its libdir/libfabric (Debian's: /usr/lib/<multiarch>/libfabric), when
# PREFIX is libfabric's own; under another prefix libfabric never looks,
# so LIBDIR/libfabric, to be named by FI_PROVIDER_PATH (docs/libfabric.md).
FI_PREFIX = $(shell pkg-config --variable=prefix libfabric 2>/dev/null)
FI_PROVDIR ?= $(if $(filter $(PREFIX),$(FI_PREFIX)),$(shell pkg-config --variable=libdir libfabric)/libfabric,$(LIBDIR)/libfabric)
UNETD_POLICY := /etc/unet/unetd.policy

# The version lives in one place, include/unet-xdp/version.h; the soname,
# the library's file name and the .pc file follow it (docs/packaging.md).
VERSION_H := include/unet-xdp/version.h
version_num = $(shell sed -n 's/^\#define UNET_$(1) *\([0-9][0-9]*\).*/\1/p' $(VERSION_H))
VER_MAJOR := $(call version_num,VERSION_MAJOR)
VER_MINOR := $(call version_num,VERSION_MINOR)
VER_PATCH := $(call version_num,VERSION_PATCH)
SOVERSION := $(call version_num,SOVERSION)
VERSION := $(VER_MAJOR).$(VER_MINOR).$(VER_PATCH)

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH_INC := /usr/include/$(shell $(CC) -dumpmachine)

# CPPFLAGS, CFLAGS and LDFLAGS are the user's (and dpkg-buildflags') (make CFLAGS="-O1 -g" keeps working);
# what the project needs lives in its own variables.
CFLAGS ?= -O2 -g
PROJ_CFLAGS := -std=gnu11 -Wall -Wextra -Werror=implicit-function-declaration \
	  -D_GNU_SOURCE -I$(BUILD) -Iinclude -Ilib -Ibpf $(SANFLAGS) -MMD -MP
ALL_CFLAGS = $(PROJ_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LIB_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
# lwIP (TCP over U-Net, lib/tcp/): its headers only for lib/tcp/.
LWIP_CFLAGS := $(shell pkg-config --cflags lwip 2>/dev/null || echo -I/usr/include/lwip)
LIBS := -lxdp -lbpf -lelf -lz -llwip -lpthread

# The object is embedded whole in the library (the skeleton): no build
# path in its debug info.
# (Quoted: the clone's path may hold a space.)
BPF_CFLAGS := -target bpf -O2 -g -Wall -Wextra -I$(ARCH_INC) -Ibpf -MMD -MP \
	      '-fdebug-prefix-map=$(CURDIR)=.'

LIB_SRCS := $(wildcard lib/*/*.c)
LIB_OBJS := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
PUB_HDRS := $(wildcard include/unet-xdp/*.h)
SKEL := $(BUILD)/unet_xdp.skel.h
BPF_OBJ := $(BUILD)/unet_xdp.bpf.o

SO_NAME := libunet-xdp.so.$(SOVERSION)
SO_FILE := $(SO_NAME).$(VER_MINOR).$(VER_PATCH)
SO := $(BUILD)/$(SO_FILE)
ALIB := $(BUILD)/libunet-xdp.a

# SHARED_TOOLS=1: unetctl and the examples link the shared library (the
# Debian packages do); by default they link the static archive, so they
# run from the build tree and can be copied anywhere.
SHARED_TOOLS ?= 0
ifeq ($(SHARED_TOOLS),1)
TOOL_LIB_DEP := $(SO)
TOOL_LIB = -L$(BUILD) -lunet-xdp
else
TOOL_LIB_DEP := $(ALIB)
TOOL_LIB = $(ALIB)
endif

MAN_PAGES := $(wildcard man/*.[1-8])
BASH_COMPLETION := completion/unetctl.bash

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(TOOL_SRCS))
# A tool of several files lives in its own directory, tests/tools/NAME/*.c.
TOOL_DIRS := $(patsubst tests/tools/%/,%,$(sort $(dir $(wildcard tests/tools/*/*.c))))
TOOL_BINS += $(patsubst %,$(BUILD)/tools/%,$(TOOL_DIRS))
BENCH_SRCS := $(wildcard bench/*.c)
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))
# The libfabric provider (docs/libfabric.md): a plugin libfabric dlopen()s,
# with the library linked in; it exports fi_prov_ini only.  Its test
# client and MPI program live in fabric/tests/.
FABRIC_SRCS := $(wildcard fabric/*.c)
FABRIC_OBJS := $(patsubst fabric/%.c,$(BUILD)/fabric/%.o,$(FABRIC_SRCS))
FABRIC_SO := $(BUILD)/libunet-fi.so
MPICC ?= mpicc
# The MPI program only where Open MPI's compiler is (make deps installs it).
FABRIC_TESTS := $(BUILD)/fabric/ufi-test \
	$(if $(shell command -v $(MPICC) 2>/dev/null),$(BUILD)/fabric/mpi-pingpong)
# The MPI programs (docs/parallel.md): Open MPI's compiler wrapper, no
# unet library (they reach U-Net through libfabric's unet provider).
# Built where Open MPI's compiler is (make deps installs it); the tests
# that run them fail without them.
PAR_SRCS := $(wildcard examples/parallel/*.c)
PAR_BINS := $(if $(shell command -v $(MPICC) 2>/dev/null),\
	$(patsubst examples/parallel/%.c,$(BUILD)/parallel/%,$(PAR_SRCS)))

# unet-run and the library it preloads (docs/unet-run.md): the library
# exports only the libc names it interposes (run/preload/libunet-preload.map).
RUN_PRELOAD_SRCS := $(wildcard run/preload/*.c)
RUN_PRELOAD_OBJS := $(patsubst run/%.c,$(BUILD)/run/%.o,$(RUN_PRELOAD_SRCS))
RUN_PRELOAD := $(BUILD)/libunet-preload.so
RUN_BIN := $(BUILD)/unet-run
# The parts without a network its unit test links.
RUN_PURE_OBJS := $(BUILD)/run/options.o $(BUILD)/run/preload/fdtab.o \
	$(BUILD)/run/preload/route.o $(BUILD)/run/preload/config.o

.PHONY: all dist deps check check-unit check-integration check-san check-modes soak demo bench bench-parallel install deb version clean tsan
all: $(ALIB) $(SO) $(FABRIC_SO) $(RUN_BIN) $(RUN_PRELOAD) $(FABRIC_TESTS) $(BUILD)/unetctl $(BUILD)/unetd $(BUILD)/libunet-xdp.pc $(UNIT_BINS) $(TOOL_BINS) $(EXAMPLE_BINS) \
     $(BUILD)/unet-bench $(PAR_BINS)

# The ThreadSanitizer build of the two-thread TCP test (tcp_threads_tsan in
# tests/integration/t_tcp.sh) and of unet-run's threads and forks
# (unet_run_threads, unet_run_fork_race): those programs, unet-run, its
# preload library and the static archive only.
tsan:
	$(MAKE) SAN=tsan BUILD=build-tsan build-tsan/tools/unet-tcp-threads build-tsan/tools/socket-threads \
		build-tsan/tools/fork-relay build-tsan/unet-run build-tsan/libunet-preload.so

# What `make install` installs, built (no tests, tools or benchmark).
dist: $(ALIB) $(SO) $(FABRIC_SO) $(RUN_BIN) $(RUN_PRELOAD) $(BUILD)/unetctl $(BUILD)/unetd $(BUILD)/libunet-xdp.pc $(EXAMPLE_BINS)

version:
	@echo $(VERSION)

deps:
	@bash scripts/install-deps.sh

$(BPF_OBJ): bpf/unet_xdp.bpf.c bpf/unet_abi.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SKEL): $(BPF_OBJ)
	$(BPFTOOL) gen skeleton $< name unet_xdp_bpf > $@.tmp && mv $@.tmp $@

$(BUILD) $(BUILD)/tests $(BUILD)/tools $(BUILD)/examples $(BUILD)/parallel:
	mkdir -p $@

# Header dependencies come from -MMD (the .d files included below); the
# skeleton is generated, so objects wait for it explicitly.
$(BUILD)/lib/%.o: lib/%.c $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/lib/tcp/tcp.o: lib/tcp/tcp.c $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(LWIP_CFLAGS) -c $< -o $@

# Made anew: `ar r` would keep the object of a source file since removed.
$(ALIB): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(SO): $(LIB_OBJS) lib/libunet-xdp.map
	$(CC) -shared -Wl,-soname,$(SO_NAME) -Wl,--version-script=lib/libunet-xdp.map \
		$(ALL_LDFLAGS) -o $@ $(LIB_OBJS) $(LIBS)
	ln -sf $(SO_FILE) $(BUILD)/$(SO_NAME)
	ln -sf $(SO_FILE) $(BUILD)/libunet-xdp.so

$(BUILD)/fabric/%.o: fabric/%.c $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(FABRIC_SO): $(FABRIC_OBJS) $(LIB_OBJS) fabric/libunet-fi.map
	$(CC) -shared -Wl,--version-script=fabric/libunet-fi.map -Wl,--no-undefined \
		$(ALL_LDFLAGS) -o $@ $(FABRIC_OBJS) $(LIB_OBJS) -lfabric $(LIBS)

# The test client is a plain libfabric application: it knows nothing of
# the provider but its name.  Built with the same sanitizer flags, so the
# SAN pass loads the sanitized provider into a sanitized process.
$(BUILD)/fabric/ufi-test: fabric/tests/ufi-test.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) -lfabric

$(BUILD)/fabric/mpi-pingpong: fabric/tests/mpi-pingpong.c
	@mkdir -p $(@D)
	$(MPICC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS)

PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|'

$(BUILD)/libunet-xdp.pc: lib/libunet-xdp.pc.in $(VERSION_H) | $(BUILD)
	$(PC_SUBST) $< > $@

$(BUILD)/run/%.o: run/%.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/run/preload/%.o: run/preload/%.c $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# The interposed sigaction runs before a sanitizer's runtime is set up
# (ThreadSanitizer's initialisation installs its handlers through it)
# and the trampoline inside signal handlers: never instrumented.
$(BUILD)/run/preload/signals.o: run/preload/signals.c $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -fno-sanitize=all -c $< -o $@

# The library's objects linked in (PIC, hidden by the version script):
# the preloaded process needs no libunet-xdp.so of its own.
$(RUN_PRELOAD): $(RUN_PRELOAD_OBJS) $(LIB_OBJS) run/preload/libunet-preload.map
	$(CC) -shared -Wl,--version-script=run/preload/libunet-preload.map -Wl,--no-undefined \
		$(ALL_LDFLAGS) -o $@ $(RUN_PRELOAD_OBJS) $(LIB_OBJS) $(LIBS)

# unet-run finds its library relative to itself (LIBDIR/unet-xdp seen
# from BINDIR), so the install can move under another prefix.
# The value is compiled in, so unet-run depends on a stamp holding it,
# rewritten only when it differs: `make install LIBDIR=...` after a
# `make` with another LIBDIR rebuilds unet-run instead of installing one
# that looks in the wrong place.
RUN_PRELOAD_REL = $(shell realpath -m --relative-to='$(BINDIR)' '$(LIBDIR)/unet-xdp')
RUN_REL_STAMP := $(BUILD)/run/preload-rel
.PHONY: run-rel-force
$(RUN_REL_STAMP): run-rel-force
	@mkdir -p $(@D); echo '$(RUN_PRELOAD_REL)' | cmp -s - $@ || echo '$(RUN_PRELOAD_REL)' >$@
$(RUN_BIN): run/unet-run.c $(BUILD)/run/options.o $(RUN_REL_STAMP)
	$(CC) $(ALL_CFLAGS) '-DRUN_PRELOAD_REL="$(RUN_PRELOAD_REL)"' -o $@ $< $(BUILD)/run/options.o $(ALL_LDFLAGS)

$(BUILD)/tests/test_unet_run: tests/unit/test_unet_run.c $(RUN_PURE_OBJS) $(ALIB) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Irun -Irun/preload -o $@ $< $(RUN_PURE_OBJS) $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lcmocka


# unetctl: one file per object (cli/unetctl.h says which floor is which).
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(patsubst cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
$(BUILD)/cli/%.o: cli/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/unetctl: $(CLI_OBJS) $(TOOL_LIB_DEP)
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJS) $(TOOL_LIB) $(ALL_LDFLAGS) $(LIBS)

# Unit tests may reach library internals: link the static archive and let
# them include lib/core/internal.h.
$(BUILD)/tests/%: tests/unit/%.c $(ALIB) $(SKEL) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lcmocka

# The provider's parsers fuzzed without a network: linked with its objects.
$(BUILD)/tests/test_fabric_proto: tests/unit/test_fabric_proto.c $(FABRIC_OBJS) $(ALIB) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Ifabric -o $@ $< $(FABRIC_OBJS) $(ALIB) $(ALL_LDFLAGS) -lfabric $(LIBS) -lcmocka

# lib/tcp's receive path fuzzed on a live connection: reads lwIP's pcbs.
$(BUILD)/tests/test_tcp_fuzz: tests/unit/test_tcp_fuzz.c $(ALIB) $(SKEL) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) $(LWIP_CFLAGS) -o $@ $< $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lcmocka

# The daemon's modules (daemon/, not part of the library).  test_policy
# links the policy module alone, test_tcp_check the TCP check alone; they
# need neither the library nor libbpf.
$(BUILD)/daemon/%.o: daemon/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Idaemon -c $< -o $@

DAEMON_OBJS := $(patsubst daemon/%.c,$(BUILD)/daemon/%.o,$(wildcard daemon/*.c))
$(BUILD)/unetd: $(DAEMON_OBJS) $(ALIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(DAEMON_OBJS) $(ALIB) $(ALL_LDFLAGS) $(LIBS)

$(BUILD)/tests/test_policy: tests/unit/test_policy.c $(BUILD)/daemon/policy.o | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Idaemon -o $@ $< $(BUILD)/daemon/policy.o $(ALL_LDFLAGS) -lcmocka

# The subordinate uid ranges, with the policy module for its user-name
# lookup (the test stands in for the log).
$(BUILD)/tests/test_subid: tests/unit/test_subid.c $(BUILD)/daemon/subid.o $(BUILD)/daemon/policy.o | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Idaemon -o $@ $< $(BUILD)/daemon/subid.o $(BUILD)/daemon/policy.o $(ALL_LDFLAGS) -lcmocka

# The check of emulated endpoints' TCP sends, alone: a pure function.
$(BUILD)/tests/test_tcp_check: tests/unit/test_tcp_check.c $(BUILD)/daemon/tcp_check.o | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Idaemon -o $@ $< $(BUILD)/daemon/tcp_check.o $(ALL_LDFLAGS) -lcmocka

# The gathering and check of emulated endpoints' frames in pieces, alone.
$(BUILD)/tests/test_emul_pieces: tests/unit/test_emul_pieces.c $(BUILD)/daemon/emul_pieces.o | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Idaemon -o $@ $< $(BUILD)/daemon/emul_pieces.o $(ALL_LDFLAGS) -lcmocka

# The check of emulated endpoints' frames on routable channels, alone,
# against the library's own frames (the model of its fuzz).
$(BUILD)/tests/test_chan_check: tests/unit/test_chan_check.c $(BUILD)/daemon/chan_check.o $(ALIB) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Idaemon -o $@ $< $(BUILD)/daemon/chan_check.o $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lcmocka

# unetctl steer's rule building, alone: a pure function.
$(BUILD)/tests/test_steer_rule: tests/unit/test_steer_rule.c $(BUILD)/cli/steer_rule.o | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Icli -o $@ $< $(BUILD)/cli/steer_rule.o $(ALL_LDFLAGS) -lcmocka

$(BUILD)/tools/%: tests/tools/%.c $(ALIB) | $(BUILD)/tools
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lm

$(BUILD)/tools/obj/%.o: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The objects of tool NAME: one per tests/tools/NAME/*.c.
tool_objs = $(patsubst tests/tools/%.c,$(BUILD)/tools/obj/%.o,$(wildcard tests/tools/$(1)/*.c))
.SECONDEXPANSION:
$(patsubst %,$(BUILD)/tools/%,$(TOOL_DIRS)): $(BUILD)/tools/%: $$(call tool_objs,$$*) $(ALIB) | $(BUILD)/tools
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.o,$^) $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lm

$(BUILD)/examples/%: examples/%.c $(TOOL_LIB_DEP) | $(BUILD)/examples
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TOOL_LIB) $(ALL_LDFLAGS) $(LIBS) -lm

$(BUILD)/parallel/%: examples/parallel/%.c | $(BUILD)/parallel
	$(MPICC) -std=gnu11 -Wall -Wextra -Werror=implicit-function-declaration -D_GNU_SOURCE $(SANFLAGS) -MMD -MP \
		$(CPPFLAGS) $(CFLAGS) -o $@ $< $(ALL_LDFLAGS) -lm

$(BUILD)/unet-bench: $(BENCH_SRCS) bench/bench.h $(ALIB) $(PUB_HDRS)
	$(CC) $(ALL_CFLAGS) -MF $@.d -o $@ $(BENCH_SRCS) $(ALIB) $(ALL_LDFLAGS) $(LIBS) -lm

# build_locked DIR MAKE-ARGS: make in DIR under a lock, so that two
# `make demo` (or check, bench) started at once in one clone take turns
# at the build instead of writing the same files together.  It builds
# on every CPU unless the caller gave -j (then make's jobserver shares
# the caller's): the README's commands are plain `make demo`, `make check`.
# (MAKEFLAGS holds -j only when a recipe runs: expanded there.)
build_jobs = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))
build_locked = mkdir -p $(1) && flock $(1)/.make.lock $(MAKE) $(build_jobs) $(2)

# The README's test command: installs what is missing, builds, runs every
# test, then again built with ASan+UBSan (scripts/check.sh: that build
# runs beside the plain pass's tests, at idle priority).
check: deps
	$(call build_locked,$(BUILD),all)
	CHECK_SAN_BUILD='$(call build_locked,build-san,SAN=1 all)' bash scripts/check.sh $(BUILD) build-san

check-unit: all
	bash tests/run-all.sh $(BUILD) unit

# make check's plain pass with every XDP data-path test in both modes
# (make check runs each in one mode per pass, the modes swapped between
# the passes).
check-modes: deps
	$(call build_locked,$(BUILD),all)
	UNET_CHECK_MODES=both bash tests/run-all.sh $(BUILD)

check-integration: all
	bash tests/integration/run.sh --build $(BUILD)

# Tests too long or not yet steady enough for make check (docs/tcp.md).
soak: deps
	$(call build_locked,$(BUILD),all)
	UNET_SOAK=1 bash tests/integration/run.sh --build $(BUILD) tcp_loss5_default

demo: deps
	$(call build_locked,$(BUILD),all)
	bash scripts/demo.sh $(BUILD)

# U-Net against kernel UDP and AF_PACKET, side by side, UAM bulk against
# raw U-Net at MTU 9000 and 1500, then unetd's fair
# service in time, then unmodified programs under unet-run against the
# kernel (docs/performance.md).
# The MPI programs over U-Net against the kernel's paths: make bench-parallel.
bench: deps
	$(call build_locked,$(BUILD),all)
	bash scripts/bench.sh $(BUILD)
	bash scripts/bench-jumbo.sh $(BUILD)
	bash scripts/bench-fair.sh $(BUILD)
	bash scripts/bench-run.sh $(BUILD)
	@echo "bench: MPI programs over U-Net and the kernel's paths: make bench-parallel (docs/parallel.md)"

# The MPI micro-benchmarks and the paper's Split-C programs on 8 namespace
# hosts over the unet provider, libfabric tcp and udp, and Open MPI's tcp
# BTL, side by side (docs/parallel.md); then the ping-pong at MTU 9000 over
# unet and the tcp BTL, and every program again with the hosts on two
# subnets behind a router, over unet and the tcp BTL.
bench-parallel: deps
	$(call build_locked,$(BUILD),all)
	bash scripts/bench-parallel.sh $(BUILD)
	bash scripts/bench-parallel.sh --mtu 9000 --nets unet,tcp --pingpong-only \
		--out bench-results/parallel-mtu9000 $(BUILD)
	bash scripts/bench-parallel.sh --subnets 2 --nets unet,tcp \
		--out bench-results/parallel-routed $(BUILD)

# The library, headers, .pc, unetctl, the man pages, unetctl's bash
# completion, the examples' binaries under LIBEXECDIR/unet-xdp; unetd in
# SBINDIR, its systemd unit (ExecStart pointing at SBINDIR) and its
# policy, which is installed only where none exists: an administrator's
# policy is never overwritten.
# Directories are made under umask 022 and written files get their modes
# explicitly: a root shell with umask 077 must not install a library or a
# directory that other users cannot read.
install: dist
	umask 022 && install -d "$(DESTDIR)$(LIBDIR)/pkgconfig" "$(DESTDIR)$(LIBDIR)/unet-xdp" "$(DESTDIR)$(INCDIR)/unet-xdp" "$(DESTDIR)$(BINDIR)" \
		"$(DESTDIR)$(LIBEXECDIR)/unet-xdp" "$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(SBINDIR)" \
		"$(DESTDIR)$(SYSTEMDUNITDIR)"
	install -m 644 $(PUB_HDRS) "$(DESTDIR)$(INCDIR)/unet-xdp/"
	install -m 644 $(ALIB) "$(DESTDIR)$(LIBDIR)/"
	install -m 755 $(SO) "$(DESTDIR)$(LIBDIR)/"
	umask 022 && install -d "$(DESTDIR)$(FI_PROVDIR)"
	install -m 644 $(FABRIC_SO) "$(DESTDIR)$(FI_PROVDIR)/"
	ln -sf $(SO_FILE) "$(DESTDIR)$(LIBDIR)/$(SO_NAME)"
	ln -sf $(SO_FILE) "$(DESTDIR)$(LIBDIR)/libunet-xdp.so"
	# Written here, not copied from $(BUILD): PREFIX may differ from the build's.
	$(PC_SUBST) lib/libunet-xdp.pc.in > "$(DESTDIR)$(LIBDIR)/pkgconfig/libunet-xdp.pc"
	chmod 644 "$(DESTDIR)$(LIBDIR)/pkgconfig/libunet-xdp.pc"
	install -m 755 $(BUILD)/unetctl "$(DESTDIR)$(BINDIR)/"
	install -m 755 $(RUN_BIN) "$(DESTDIR)$(BINDIR)/"
	install -m 644 $(RUN_PRELOAD) "$(DESTDIR)$(LIBDIR)/unet-xdp/"
	install -m 755 $(EXAMPLE_BINS) "$(DESTDIR)$(LIBEXECDIR)/unet-xdp/"
	for m in $(MAN_PAGES); do \
		s=$${m##*.}; (umask 022 && install -d "$(DESTDIR)$(MANDIR)/man$$s") && \
		install -m 644 $$m "$(DESTDIR)$(MANDIR)/man$$s/" || exit 1; \
	done
	install -m 644 $(BASH_COMPLETION) "$(DESTDIR)$(BASHCOMPDIR)/unetctl"
	install -m 755 $(BUILD)/unetd "$(DESTDIR)$(SBINDIR)/"
	sed 's|^ExecStart=/usr/sbin/unetd |ExecStart=$(SBINDIR)/unetd |' etc/unetd.service \
		> "$(DESTDIR)$(SYSTEMDUNITDIR)/unetd.service"
	chmod 644 "$(DESTDIR)$(SYSTEMDUNITDIR)/unetd.service"
	umask 022 && install -d -m 755 "$(DESTDIR)$(dir $(UNETD_POLICY))"
	@if [ -e "$(DESTDIR)$(UNETD_POLICY)" ]; then \
		echo "install: keeping the existing $(DESTDIR)$(UNETD_POLICY) (the shipped one is etc/unetd.policy)"; \
	else \
		echo "install -m 644 etc/unetd.policy $(DESTDIR)$(UNETD_POLICY)"; \
		install -m 644 etc/unetd.policy "$(DESTDIR)$(UNETD_POLICY)" || exit 1; \
	fi
	@[ -n "$(DESTDIR)" ] || getent group unet >/dev/null || \
		echo "install: note: no group 'unet': unetd refuses $(UNETD_POLICY) until it exists (addgroup --system unet)"

# Debian packages from this tree (debian/, docs/packaging.md) into
# $(BUILD)/deb/.  DEB_BUILD_OPTIONS is passed on (e.g. nocheck parallel=2).
deb:
	bash scripts/build-deb.sh $(BUILD)/deb

clean:
	rm -rf build build-san build-tsan

# (Not a BUILD/tools/NAME.d left from when tool NAME was one file: it
# would name the vanished tests/tools/NAME.c.)
# $(BUILD)/unetctl.d is what the one-file unetctl left behind: it names
# cli/unetctl.c, which no longer exists.
-include $(filter-out $(TOOL_DIRS:%=$(BUILD)/tools/%.d) $(BUILD)/unetctl.d,$(shell find $(BUILD) -name '*.d' 2>/dev/null))
