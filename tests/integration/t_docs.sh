# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_docs.sh - the docs as an outside user reads them: every C example in
# the README and docs/*.md compiles and links against an installed tree
# only (its headers, its .pc file, its library; never the source tree),
# and make install puts the libfabric provider where the installed
# libfabric looks for providers.  Sourced by run.sh (see lib.sh).
#
# A fenced block opened with ```c is a whole program: it must compile and
# link as it stands.  A block opened with ```c fragment is an excerpt (a
# declaration list, another project's code): it is counted, not built.

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"docs_hosts_installed|-|180|scripts/hosts.sh from a tree that was never built uses what make install installed: unetctl from PATH and the provider from libfabric's provider directory by default (hosts.env says which), --provider-dir names another; an MPI ping-pong over the unet provider installed in a DESTDIR runs on 2 hosts"
	"docs_facts|-|60|what the docs say matches the code: the segment and ring defaults of unet.h and unetd.md are the library's (lib/core/endpoint.c) and the daemon's (daemon/emul.c, daemon/grant.c); unetd(8)'s 'not served' and unetd.md's 'not built' lists name neither UDP (daemon/server.c serves UDP_OPEN) nor TCP (it serves TCP_OPEN; nor do the README and tcp.md say TCP is not on its endpoints) nor serving other namespaces (it takes the client's); the README's Limits carry tcp.md's ethtool needs on veth"
	"docs_examples|-|300|make install PREFIX=/usr into a DESTDIR: the provider lands in the directory of the installed libfabric (pkg-config libfabric's libdir/libfabric); every \`\`\`c block of README.md and docs/*.md compiles with -Wall -Werror and links with pkg-config libunet-xdp of that DESTDIR only, failing with the doc and line; any other C info string is refused"
)

# docs_blocks OUT-DIR FILE...: each ```c block of each FILE written to
# OUT-DIR/N.c; prints one line per block: "whole|fragment FILE:LINE N.c".
# A C block with another info string ("```C", "```c whole") is an error.
docs_blocks() {
	local out=$1
	shift
	awk -v out="$out" '
		FNR == 1 { inb = 0 }
		/^```/ {
			if (inb) { inb = 0; close(path); next }
			info = substr($0, 4)
			if (info == "c" || info == "c fragment") {
				n++; path = out "/" n ".c"; inb = 1
				kind = (info == "c") ? "whole" : "fragment"
				print kind, FILENAME ":" FNR, n ".c"
				printf "" > path
				next
			}
			if (info ~ /^[cC]([^a-z+]|$)/ || info ~ /^[cC] /) {
				print "bad", FILENAME ":" FNR, info
			}
			inb = 2
			next
		}
		inb == 1 { print > path }
	' "$@"
}

t_docs_examples() {
	command -v pkg-config >/dev/null || fail "pkg-config is missing (scripts/install-deps.sh installs it)"
	local fidir
	fidir=$(pkg-config --variable=libdir libfabric 2>/dev/null) ||
		skip "no libfabric .pc (libfabric-dev): the provider's directory is unknown"
	local dest=$T_DIR/dest src=$T_DIR/src
	mkdir -p "$src" || fail "mkdir $src"
	docs_install "$dest"

	# The provider where the installed libfabric dlopen()s providers from
	# (its PROVDLDIR: libdir/libfabric), not PREFIX/lib/libfabric.
	[[ -f $dest$fidir/libfabric/libunet-fi.so ]] ||
		fail "make install PREFIX=/usr did not put libunet-fi.so in $fidir/libfabric (libfabric's provider directory): $(cd "$dest" && find . -name libunet-fi.so)"
	note "provider: $fidir/libfabric/libunet-fi.so"

	# Only the install: its .pc under the DESTDIR, paths rewritten into it.
	local pcdir
	pcdir=$(dirname "$(find "$dest" -name libunet-xdp.pc | head -1)")
	[[ -f $pcdir/libunet-xdp.pc ]] || fail "make install wrote no libunet-xdp.pc"
	local flags
	flags=$(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs libunet-xdp) ||
		fail "pkg-config libunet-xdp from $pcdir failed"
	[[ $flags == *"$dest"* && $flags != *"$ROOT"* ]] || fail "pkg-config flags do not point into the DESTDIR only: $flags"
	note "flags: $flags"

	local list kind where file whole=0 frag=0 bad=0 err
	list=$(cd "$ROOT" && docs_blocks "$src" README.md docs/*.md) || fail "reading the docs' blocks failed"
	while read -r kind where file; do
		case $kind in
		bad)
			echo "$where: a C block with info string '$file': use \`\`\`c (a whole program) or \`\`\`c fragment"
			bad=$((bad + 1))
			;;
		fragment)
			frag=$((frag + 1))
			;;
		whole)
			# shellcheck disable=SC2086
			if err=$(cd "$src" && gcc -std=gnu11 -Wall -Werror -o "${file%.c}" "$file" $flags 2>&1); then
				note "$where: compiles and links"
				whole=$((whole + 1))
			else
				echo "$where: does not compile against the install:"
				# gcc's FILE:LINE: made the doc's own line.
				awk -v f="$file:" -v doc="${where%:*}" -v at="${where##*:}" '
					index($0, f) == 1 { rest = substr($0, length(f) + 1); split(rest, a, ":")
						if (a[1] ~ /^[0-9]+$/) { $0 = doc ":" (at + a[1]) substr(rest, length(a[1]) + 1) } }
					{ print }' <<<"$err"
				bad=$((bad + 1))
			fi
			;;
		esac
	done <<<"$list"
	note "$whole whole programs built, $frag fragments skipped, $bad failed"
	((whole > 0)) || fail "no \`\`\`c block found: the README's example is one"
	((bad == 0)) || fail "$bad C example(s) of the docs do not build against the install (above)"
}

# docs_install DEST: make install PREFIX=/usr into DEST (the test's log on failure).
docs_install() {
	make -s -C "$ROOT" BUILD="$(make_build_dir)" PREFIX=/usr DESTDIR="$1" install >"$T_DIR/make.log" 2>&1 ||
		{ cat "$T_DIR/make.log"; fail "make install failed"; }
}

t_docs_hosts_installed() {
	command -v mpirun >/dev/null || fail "mpirun missing (openmpi-bin: make deps)"
	[[ -x $BUILD/parallel/mpi_pingpong ]] || fail "$BUILD/parallel/mpi_pingpong not built (mpicc missing? make deps)"
	grep -qw bpf /proc/filesystems || skip "this kernel has no bpffs"
	local fidir
	fidir=$(pkg-config --variable=libdir libfabric 2>/dev/null) ||
		skip "no libfabric .pc (libfabric-dev): the provider's directory is unknown"
	local dest=$T_DIR/dest tree=$T_DIR/tree name="d$$" hosts env
	docs_install "$dest"
	# An installed system: the script without a build tree beside it.
	mkdir -p "$tree/scripts" || fail "mkdir $tree/scripts"
	cp "$ROOT/scripts/hosts.sh" "$tree/scripts/" || fail "copying hosts.sh"
	hosts=$tree/scripts/hosts.sh
	T_CLEANUP+=("PATH=\"$dest/usr/bin:\$PATH\" \"$hosts\" down $name")
	export PATH="$dest/usr/bin:$PATH"

	"$hosts" up 2 --name "$name" --mode skb >"$T_DIR/up.log" 2>&1 ||
		{ cat "$T_DIR/up.log"; fail "hosts.sh up 2 (nothing named) failed on an installed system"; }
	env=/tmp/unet-hosts/$name/hosts.env
	cat "$env"
	grep -qx "UNET_HOSTS_UNETCTL=$dest/usr/bin/unetctl" "$env" || fail "hosts.sh did not take unetctl from PATH"
	grep -qx "UNET_HOSTS_PROVDIR=$fidir/libfabric" "$env" ||
		fail "hosts.sh did not take the provider from libfabric's directory $fidir/libfabric"
	"$hosts" exec "$name" 2 -- unetctl status eth0 | grep -q '^attached: yes' ||
		fail "the installed unetctl did not attach the program on host 2"
	"$hosts" down "$name" || fail "hosts.sh down failed"

	"$hosts" up 2 --name "$name" --mode skb --provider-dir "$dest$fidir/libfabric" >"$T_DIR/up.log" 2>&1 ||
		{ cat "$T_DIR/up.log"; fail "hosts.sh up 2 --provider-dir failed"; }
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	"$hosts" mpirun "$name" --net unet --timeout 60 -- "$BUILD/parallel/mpi_pingpong" --iters 200 --maxsize 4096 \
		>"$T_DIR/job.log" 2>&1 || { cat "$T_DIR/job.log"; fail "an MPI job over the installed provider failed"; }
	cat "$T_DIR/job.log"
	grep -q '^RESULT .*"ok":true' "$T_DIR/job.log" || fail "mpi_pingpong printed no RESULT ok line"
	"$hosts" down "$name" || fail "hosts.sh down failed"
}

# docs_mib FILE MACRO: the value of '#define MACRO (Nu << 20)' in FILE, as "N MiB".
docs_mib() {
	local n
	n=$(sed -n "s/^#define $2 (\([0-9]*\)u* << 20).*/\1/p" "$ROOT/$1")
	[[ -n $n ]] || fail "$1: no '#define $2 (N << 20)'"
	echo "$n MiB"
}

# docs_num FILE MACRO: the value of '#define MACRO Nu' in FILE.
docs_num() {
	local n
	n=$(sed -n "s/^#define $2 \([0-9]*\)u*\$/\1/p" "$ROOT/$1")
	[[ -n $n ]] || fail "$1: no '#define $2 N'"
	echo "$n"
}

# docs_section FILE START END: the lines of FILE from the first matching
# START up to (not including) the next matching END.
docs_section() {
	awk -v s="$2" -v e="$3" 'on && $0 ~ e { exit } $0 ~ s { on = 1 } on' "$ROOT/$1"
}

t_docs_facts() {
	local own emul ring grant bufs hdr doc
	own=$(docs_mib lib/core/endpoint.c DEFAULT_SEGMENT)
	emul=$(docs_mib daemon/emul.c DEFAULT_SEGMENT)
	grant=$(docs_mib daemon/grant.c GRANT_SEGMENT)
	ring=$(docs_num daemon/emul.c DEFAULT_RING)
	# The library posts half an emulated segment's frames (2048 bytes) as
	# receive buffers (lib/core/remote.c: fill_target = nframes / 2).
	bufs=$((${emul% MiB} * 1024 * 1024 / 2048 / 2))
	note "defaults: own $own, emulated $emul with $ring-entry rings and $bufs receive buffers, granted $grant"
	# The struct's comments as one line: no line breaks, no leading '*'.
	hdr=$(sed -n '/^struct unet_endpoint_opts {/,/^};/{s/^[[:space:]]*\*//;p}' "$ROOT/include/unet-xdp/unet.h" |
		tr -s ' \t\n' ' ')
	doc=$(tr -s ' \t\n' ' ' <"$ROOT/docs/unetd.md")
	local want
	for want in "$own" "$emul" "$grant" "$ring-entry rings" "$bufs receive buffers"; do
		[[ $hdr == *"$want"* ]] || fail "unet.h's struct unet_endpoint_opts does not say '$want'"
		[[ $doc == *"$want"* ]] || fail "docs/unetd.md does not say '$want'"
	done

	# unetd(8) and unetd.md agree with the daemon on what it serves.
	local man md
	man=$(docs_section man/unetd.8 '^Not served yet' '^\.PP')
	md=$(docs_section docs/unetd.md '^## What is not built yet' '^## [^W]')
	[[ -n $man && -n $md ]] || fail "unetd(8) has no 'Not served yet' or unetd.md no 'What is not built yet'"
	echo "unetd(8): $man"
	echo "unetd.md: $md"
	if grep -q 'case UNETD_REQ_UDP_OPEN:' "$ROOT/daemon/server.c"; then
		! grep -qi 'udp' <<<"$man$md" || fail "the daemon serves UDP_OPEN, yet unetd(8) or unetd.md lists UDP as not served"
		grep -qi 'UDP sockets are served on both kinds' "$ROOT/man/unetd.8" || fail "unetd(8) does not say UDP is served"
	fi
	if grep -q 'case UNETD_REQ_TCP_OPEN:' "$ROOT/daemon/server.c"; then
		! grep -qi 'tcp' <<<"$man$md" || fail "the daemon serves TCP_OPEN, yet unetd(8) or unetd.md lists TCP as not served"
		grep -qi 'TCP connections and listeners too' "$ROOT/man/unetd.8" || fail "unetd(8) does not say TCP is served"
		! grep -qi 'not on emulated endpoints\|not on endpoints from unetd' "$ROOT/README.md" "$ROOT/docs/tcp.md" ||
			fail "the daemon serves TCP, yet the README or tcp.md says TCP is not on its endpoints"
	fi
	if grep -q 'netns_fd' "$ROOT/daemon/server.c"; then
		! grep -qiE 'several (network )?namespaces|other (network )?namespaces|more than one (network )?namespace|namespaces? of (its|their) own' <<<"$man$md" ||
			fail "the daemon serves clients' namespaces, yet unetd(8) or unetd.md lists that as not built"
		grep -qi 'One daemon serves every network namespace' "$ROOT/man/unetd.8" ||
			fail "unetd(8) does not say one daemon serves every namespace a client may administer"
	fi

	# What TCP needs of a veth peer (tcp.md) is among the README's limits.
	local need limits
	need=$(grep -o 'ethtool -K DEV [a-z -]*off' "$ROOT/docs/tcp.md" | head -1)
	[[ -n $need ]] || fail "docs/tcp.md names no ethtool setting for a kernel peer on veth"
	limits=$(docs_section README.md '^## Limits' '^## ' | tr -s ' \n' ' ')
	[[ $limits == *"${need}"* ]] || fail "the README's Limits do not carry tcp.md's '$need'"
	note "README's Limits carry '$need'"
}
