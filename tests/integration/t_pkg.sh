# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_pkg.sh - installable like any Debian tool: versions that agree, the
# JSON schema version, man pages, bash completion, the Debian packages
# (built, listed, checked, installed into a copy of the machine where the
# README's quick tour runs).  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"versions|-|60|version.h = make version = .pc = debian/changelog = man pages = unetctl --version; soname libunet-xdp.so.SOVERSION, newest map node LIBUNET_XDP_MAJOR.MINOR, unet_version exported there"
	"json_schema|-|60|every unetctl --json document (listings, status, stats, attach, --version) starts with schema_version 1; listings are arrays under their key"
	"man_pages|-|60|man/*.[1-8] (unetctl.8, libunet-xdp.3, unetd.8, unetd.policy.5) render with man --warnings and no warning; make install puts them under MANDIR, unetd in SBINDIR, its unit (systemd-analyze verify clean) and its policy at daemon/main.c's DEFAULT_POLICY, and keeps a policy that exists"
	"completion|-|60|in a scripted bash session with bash-completion: unetctl completes subcommands, an interface of the namespace, --mode values, channel tags from unetctl channel list"
	"deb|-|300|make deb (nocheck): the packages, their files in the right package (unetd, its unit, conffile policy and pages in unetd), unetd's postinst makes group unet before starting the unit, no build path inside, lintian without errors; apt installs them into an overlay copy of / without the source tree, where the group, unit and policy exist, unetd --help runs and unetd starts on the installed policy, and the README's quick tour runs"
)

# pkg_version: the version the Makefile reads from version.h.
pkg_version() {
	make -s --no-print-directory -C "$ROOT" version
}

# The N of the soname libunet-xdp.so.N, and of the runtime package libunet-xdpN.
pkg_soversion() {
	sed -n 's/^#define UNET_SOVERSION *\([0-9]*\).*/\1/p' "$ROOT/include/unet-xdp/version.h"
}

t_versions() {
	local v h so node pcv chv
	v=$(pkg_version) || fail "make version failed"
	h=$(sed -n 's/^#define UNET_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
		"$ROOT/include/unet-xdp/version.h" | paste -sd.)
	note "make version: $v, version.h: $h"
	[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ && $v == "$h" ]] || fail "make version '$v' is not version.h's '$h'"
	[[ -f $BUILD/libunet-xdp.pc ]] || fail "$BUILD/libunet-xdp.pc not built"
	pcv=$(sed -n 's/^Version: *//p' "$BUILD/libunet-xdp.pc")
	[[ $pcv == "$v" ]] || fail "libunet-xdp.pc says Version $pcv, want $v"
	chv=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version) || fail "dpkg-parsechangelog failed"
	[[ $chv == "$v" ]] || fail "debian/changelog's newest version is $chv, want $v (native package)"
	local m
	for m in "$ROOT"/man/*.[1-8]; do
		grep -q "^\.TH .*\"unet-xdp $v\"" "$m" || fail "$m: .TH does not say \"unet-xdp $v\""
	done
	"$UNETCTL" --version | grep -qx "unetctl $v  library $v  json_schema 1" ||
		fail "unetctl --version: $("$UNETCTL" --version)"
	# The shared library: soname from UNET_SOVERSION, file name from the
	# version, unet_version in the newest node of the version script.
	local sov minor patch
	sov=$(pkg_soversion)
	IFS=. read -r _ minor patch <<<"$v"
	so=$BUILD/libunet-xdp.so.$sov.$minor.$patch
	[[ -f $so ]] || fail "no $so"
	readelf -d "$so" | grep -q "Library soname: \[libunet-xdp.so.$sov\]" ||
		fail "soname of $so is not libunet-xdp.so.$sov: $(readelf -d "$so" | grep SONAME)"
	node=$(grep -o '^LIBUNET_XDP_[0-9.]*' "$ROOT/lib/libunet-xdp.map" | tail -1)
	[[ $node == "LIBUNET_XDP_${v%.*}" ]] ||
		fail "newest node of lib/libunet-xdp.map is $node, want LIBUNET_XDP_${v%.*} (docs/packaging.md)"
	readelf --dyn-syms -W "$so" | grep -q " unet_version@@$node\$" ||
		fail "unet_version is not exported as unet_version@@$node"
	grep -q "(symver)$node " "$ROOT/debian/libunet-xdp$sov.symbols" ||
		fail "debian/libunet-xdp$sov.symbols does not list $node"
	grep -q "^libunet-xdp.so.$sov libunet-xdp$sov " "$ROOT/debian/libunet-xdp$sov.symbols" &&
		grep -q "^Package: libunet-xdp$sov\$" "$ROOT/debian/control" ||
		fail "debian/: the runtime package is not libunet-xdp$sov"
}

t_json_schema() {
	setup_ns
	T_MODE=skb
	local out cmd key
	out=$(ctl_a --json attach "$IF_A" --mode skb) || fail "attach failed"
	jq -e '.schema_version == 1' <<<"$out" >/dev/null || fail "attach: $out"
	for cmd in "channel list:channels" "endpoint list:endpoints" "udp list:udp" "status:interfaces"; do
		key=${cmd#*:}
		# shellcheck disable=SC2086
		out=$(ctl_a --json ${cmd%:*}) || fail "unetctl --json ${cmd%:*} failed"
		echo "${cmd%:*}: $out"
		jq -e --arg k "$key" 'keys_unsorted[0] == "schema_version" and .schema_version == 1
			and (.[$k] | type == "array")' <<<"$out" >/dev/null ||
			fail "unetctl --json ${cmd%:*}: no schema_version first or no array under $key: $out"
	done
	for cmd in "status $IF_A" "stats $IF_A" "channel list $IF_A" "--version"; do
		# shellcheck disable=SC2086
		out=$(ctl_a --json $cmd) || fail "unetctl --json $cmd failed"
		jq -e 'keys_unsorted[0] == "schema_version" and .schema_version == 1' <<<"$out" >/dev/null ||
			fail "unetctl --json $cmd: $out"
	done
	# Text output has no schema line.
	ctl_a status "$IF_A" | grep -q schema && fail "text status shows schema_version"
	return 0
}

t_man_pages() {
	local m err n=0 dest=$T_DIR/dest p
	command -v man >/dev/null || fail "man is missing (scripts/install-deps.sh installs man-db)"
	for m in "$ROOT"/man/*.[1-8]; do
		err=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$m" 2>&1 >"$T_DIR/page.txt")
		[[ -z $err ]] || fail "$(basename "$m") renders with warnings: $err"
		grep -q '^NAME' "$T_DIR/page.txt" || fail "$(basename "$m") has no NAME section"
		note "$(basename "$m"): $(wc -l <"$T_DIR/page.txt") lines, no warnings"
		n=$((n + 1))
	done
	for p in unetctl.8 libunet-xdp.3 unetd.8 unetd.policy.5; do
		[[ -f $ROOT/man/$p ]] || fail "man/$p is missing"
	done
	make -s -C "$ROOT" BUILD="$(make_build_dir)" PREFIX=/usr DESTDIR="$dest" install >"$T_DIR/make.log" 2>&1 ||
		{ cat "$T_DIR/make.log"; fail "make install failed"; }
	for p in man8/unetctl.8 man3/libunet-xdp.3 man8/unetd.8 man5/unetd.policy.5; do
		[[ -f $dest/usr/share/man/$p ]] || fail "make install did not put $p under /usr/share/man"
	done
	[[ -f $dest/usr/share/bash-completion/completions/unetctl ]] ||
		fail "make install did not put the completion under /usr/share/bash-completion/completions"

	# unetd: the binary in SBINDIR, the unit, the policy where the daemon
	# reads it.
	local unit=$dest/lib/systemd/system/unetd.service pol
	[[ -x $dest/usr/sbin/unetd ]] || fail "make install did not put unetd in /usr/sbin"
	"$dest/usr/sbin/unetd" --help | grep -q -- '--policy' || fail "the installed unetd --help"
	pol=$(sed -n 's/^#define DEFAULT_POLICY "\(.*\)"$/\1/p' "$ROOT/daemon/main.c")
	[[ $pol == /etc/unet/unetd.policy ]] || fail "daemon/main.c's DEFAULT_POLICY is '$pol', make install writes /etc/unet/unetd.policy"
	cmp -s "$dest$pol" "$ROOT/etc/unetd.policy" || fail "make install did not put etc/unetd.policy at $pol"
	[[ $(stat -c %a "$dest$pol") == 644 && $(stat -c %a "$(dirname "$dest$pol")") == 755 ]] ||
		fail "policy or its directory has the wrong mode (unetd refuses a file others can write)"
	grep -qx 'ExecStart=/usr/sbin/unetd --foreground' "$unit" || fail "$unit: ExecStart: $(grep ExecStart "$unit")"
	grep -qx 'RuntimeDirectory=unet' "$unit" && grep -qx 'RuntimeDirectoryMode=0755' "$unit" ||
		fail "$unit: no RuntimeDirectory=unet with mode 0755 (the socket's directory)"
	# An administrator's policy survives a second install.
	echo "user 65534 kinds emulated tags 7" >>"$dest$pol"
	make -s -C "$ROOT" BUILD="$(make_build_dir)" PREFIX=/usr DESTDIR="$dest" install >"$T_DIR/make2.log" 2>&1 ||
		{ cat "$T_DIR/make2.log"; fail "make install (again) failed"; }
	grep -qx "user 65534 kinds emulated tags 7" "$dest$pol" || fail "make install overwrote an existing policy"
	grep -q "keeping the existing" "$T_DIR/make2.log" || fail "make install did not say it kept the policy"
	# PREFIX moves unetd, and the unit follows.
	make -s -C "$ROOT" BUILD="$(make_build_dir)" PREFIX=/usr/local DESTDIR="$T_DIR/dest2" install >/dev/null 2>&1 ||
		fail "make install PREFIX=/usr/local failed"
	grep -qx 'ExecStart=/usr/local/sbin/unetd --foreground' "$T_DIR/dest2/lib/systemd/system/unetd.service" ||
		fail "with PREFIX=/usr/local the unit does not start /usr/local/sbin/unetd"
	if command -v systemd-analyze >/dev/null; then
		# verify wants ExecStart's binary and the Documentation= pages
		# to exist: point both at the staged install.
		mkdir -p "$T_DIR/unit"
		sed "s|^ExecStart=/usr/sbin/|ExecStart=$dest/usr/sbin/|" "$unit" >"$T_DIR/unit/unetd.service"
		err=$(cd "$T_DIR/unit" && MANPATH=$dest/usr/share/man systemd-analyze verify ./unetd.service 2>&1) ||
			fail "systemd-analyze verify unetd.service: $err"
		[[ -z $err ]] || fail "systemd-analyze verify unetd.service warns: $err"
		note "systemd-analyze verify unetd.service: clean"
	else
		note "systemd-analyze is not installed: the unit was not verified"
	fi
}

t_completion() {
	local bc=/usr/share/bash-completion/bash_completion comp=$ROOT/completion/unetctl.bash out
	[[ -r $bc ]] || fail "$bc is missing (scripts/install-deps.sh installs bash-completion)"
	setup_ns
	# A stand-in unetctl that lists two channels the way unetctl does.
	local stub=$T_DIR/bin/unetctl
	mkdir -p "$T_DIR/bin"
	cat >"$stub" <<-'STUB'
		#!/bin/bash
		[[ " $* " == *" channel list "* ]] || exit 1
		echo "iface $3  tag 7  peer_mac 02:00:00:00:00:0b  peer_tag 9  endpoint 0  pid 1  stale no"
		echo "iface $3  tag 12  peer_mac 02:00:00:00:00:0b  peer_tag 9  endpoint 0  pid 1  stale no"
	STUB
	chmod +x "$stub"
	cat >"$T_DIR/session.sh" <<-EOF
		source ${bc@Q}
		source ${comp@Q}
		c() {
			COMP_LINE="\$1"; COMP_POINT=\${#COMP_LINE}
			read -ra COMP_WORDS <<<"\$COMP_LINE"
			[[ \$COMP_LINE == *" " ]] && COMP_WORDS+=("")
			COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=()
			_unetctl
			echo "\$1|\${COMPREPLY[*]}"
		}
		complete -p unetctl >/dev/null || echo "no completion registered"
		c "unetctl cha"
		c "unetctl --json st"
		c "unetctl attach ${IF_A:0:4}"
		c "unetctl channel list "
		c "unetctl attach $IF_A --mode "
		c "$stub channel del $IF_A "
	EOF
	out=$(in_a bash --norc --noprofile "$T_DIR/session.sh" 2>&1) || fail "bash session failed: $out"
	echo "$out"
	grep -q "no completion" <<<"$out" && fail "sourcing the script registered no completion for unetctl"
	grep -qx "unetctl cha|channel" <<<"$out" || fail "'unetctl cha' does not complete to channel"
	grep -qx "unetctl --json st|status steer stats" <<<"$out" || fail "'unetctl --json st': want status steer stats"
	grep -qx "unetctl attach ${IF_A:0:4}|$IF_A" <<<"$out" ||
		fail "'unetctl attach ${IF_A:0:4}' does not complete to the namespace's $IF_A"
	grep -qx "unetctl channel list |.*\b$IF_A\b.*" <<<"$out" || fail "'channel list ' offers no interface"
	grep -qx "unetctl attach $IF_A --mode |native skb auto" <<<"$out" || fail "--mode values"
	grep -qx "$stub channel del $IF_A |7 12" <<<"$out" || fail "channel del: tags 7 12 not offered"
}

# deb_check_contents DIR: the packages in DIR hold what they should.
deb_check_contents() {
	local d=$1 p f multi sov rt minor patch
	multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	sov=$(pkg_soversion)
	rt=libunet-xdp$sov
	IFS=. read -r _ minor patch <<<"$(pkg_version)"
	for p in $rt libunet-xdp-dev unet-xdp-tools unetd libfabric-unet; do
		ls "$d"/${p}_*.deb >/dev/null 2>&1 || fail "no $p package in $d"
		dpkg-deb -c "$d"/${p}_*.deb | awk '{print $6}' | sed 's|^\./|/|' >"$T_DIR/$p.files"
		note "$p: $(grep -vc '/$' "$T_DIR/$p.files") files"
		sed 's/^/    /' "$T_DIR/$p.files"
	done
	# Each file in its package, and only there.
	local -A want=(
		[$rt]="/usr/lib/$multi/libunet-xdp.so.$sov /usr/lib/$multi/libunet-xdp.so.$sov.$minor.$patch"
		[libunet-xdp-dev]="/usr/include/unet-xdp/unet.h /usr/include/unet-xdp/version.h /usr/include/unet-xdp/uam.h /usr/include/unet-xdp/unet_udp.h /usr/include/unet-xdp/unet_tcp.h /usr/lib/$multi/libunet-xdp.a /usr/lib/$multi/libunet-xdp.so /usr/lib/$multi/pkgconfig/libunet-xdp.pc /usr/share/man/man3/libunet-xdp.3.gz /usr/share/doc/libunet-xdp-dev/examples/pingpong.c"
		[unet-xdp-tools]="/usr/bin/unetctl /usr/share/man/man8/unetctl.8.gz /usr/share/bash-completion/completions/unetctl /usr/libexec/unet-xdp/pingpong /usr/libexec/unet-xdp/stream /usr/libexec/unet-xdp/kv"
		[libfabric-unet]="/usr/lib/$multi/libfabric/libunet-fi.so"
		[unetd]="/usr/sbin/unetd /etc/unet/unetd.policy /lib/systemd/system/unetd.service /usr/share/man/man8/unetd.8.gz /usr/share/man/man5/unetd.policy.5.gz /usr/share/doc/unetd/unetd-policy.md.gz /usr/share/doc/unetd/unetd.md.gz"
	)
	local q
	for p in "${!want[@]}"; do
		for f in ${want[$p]}; do
			grep -qx "$f" "$T_DIR/$p.files" || fail "$f is not in $p"
			for q in "${!want[@]}"; do
				[[ $q == "$p" ]] && continue
				grep -qx "$f" "$T_DIR/$q.files" && fail "$f is in $q as well as $p"
			done
		done
	done
	# No static archive, header or .pc in the runtime package.
	grep -Eq '\.(a|h|pc)$|/libunet-xdp\.so$' "$T_DIR/$rt.files" &&
		fail "$rt holds development files"
	dpkg-deb -f "$d"/unet-xdp-tools_*.deb Depends | grep -q "$rt" ||
		fail "unet-xdp-tools does not depend on $rt (unetctl should link the shared library)"
	dpkg-deb -f "$d"/libunet-xdp-dev_*.deb Depends | grep -q "$rt (= " ||
		fail "libunet-xdp-dev does not depend on the same version of $rt"
	# unetd: its policy a conffile; its postinst makes group unet (the
	# policy names it, and unetd refuses a policy naming a missing group)
	# before debhelper's snippet enables and starts the unit.
	local ctl=$T_DIR/unetd.control
	dpkg-deb -e "$d"/unetd_*.deb "$ctl" || fail "dpkg-deb -e unetd"
	grep -qx /etc/unet/unetd.policy "$ctl/conffiles" || fail "/etc/unet/unetd.policy is not a conffile of unetd"
	grep -q '^group unet ' "$ROOT/etc/unetd.policy" || fail "etc/unetd.policy no longer names group unet: revisit the postinst"
	awk '/addgroup --system/ { g = NR } /deb-systemd-helper enable .unetd.service/ { e = NR }
	     /deb-systemd-invoke .*unetd.service/ { i = NR }
	     END { exit !(g && e && i && g < e && g < i) }' "$ctl/postinst" ||
		fail "unetd's postinst does not add group unet before enabling and starting unetd.service: $(cat "$ctl/postinst")"
	dpkg-deb -f "$d"/unetd_*.deb Depends | grep -qw adduser || fail "unetd's postinst runs addgroup but it does not depend on adduser"
	# No build path in any installed file.
	local x=$T_DIR/extract src
	src=$(cd "$d/src"/unet-xdp-* && pwd)
	mkdir -p "$x"
	for f in "$d"/*.deb; do dpkg-deb -x "$f" "$x"; done
	if grep -rlaF -e "$src" -e "$ROOT" "$x" >"$T_DIR/leaks"; then
		fail "build paths ($src or $ROOT) inside: $(tr '\n' ' ' <"$T_DIR/leaks")"
	fi
	note "no build path ($src, $ROOT) in any packaged file"
}

# The README's quick tour: the sh block after <!-- quick-tour -->.
quick_tour() {
	awk '/<!-- quick-tour -->/ { on = 1; next }
	     on && /^```sh/ { inb = 1; next }
	     inb && /^```/ { exit }
	     inb { print }' "$ROOT/README.md"
}

t_deb() {
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		skip "packages are built and installed in the plain pass (the sanitizer build is not packaged)"
	fi
	local d=$BUILD_TREE/deb start=$SECONDS
	DEB_BUILD_OPTIONS="nocheck parallel=2" make -s -C "$ROOT" BUILD="$(make_build_dir)" deb >"$T_DIR/deb.log" 2>&1
	local rc=$?
	cat "$T_DIR/deb.log"
	((rc == 0)) || fail "make deb failed (exit $rc)"
	note "make deb (build, lintian): $((SECONDS - start)) s"
	note "lintian: $(grep -c '^E:' "$d/lintian.log") errors, $(grep -c '^W:' "$d/lintian.log") warnings"
	deb_check_contents "$d"

	# Install into a copy of this machine: an overlay over /, its upper
	# layer on a tmpfs, in a mount namespace of its own (gone with it).
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
	grep -qw overlay /proc/filesystems || skip "no overlayfs: cannot make a copy of / to install into"
	quick_tour >"$T_DIR/tour.sh"
	[[ -s $T_DIR/tour.sh ]] || fail "README.md has no quick tour after <!-- quick-tour -->"
	local w=$T_DIR/root
	mkdir -p "$w"
	cp "$d"/libunet-xdp"$(pkg_soversion)"_*.deb "$d"/libunet-xdp-dev_*.deb "$d"/unet-xdp-tools_*.deb "$d"/unetd_*.deb \
		"$T_DIR/tour.sh" "$w/" ||
		fail "cp"
	cat >"$w/inside.sh" <<-'EOF'
		set -euo pipefail
		export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
		cd /pkgs
		# man-db's trigger would rebuild the whole index: not needed here.
		rm -f /var/lib/man-db/auto-update
		apt-get install -y -q --no-install-recommends /pkgs/*.deb
		dpkg -s libunet-xdp@SOV@ libunet-xdp-dev unet-xdp-tools unetd | grep -c '^Status: install ok installed'
		v=$(pkg-config --modversion libunet-xdp)
		echo "pkg-config: libunet-xdp $v"
		unetctl --version
		unetctl --version | grep -q "^unetctl $v  library $v "
		man -w unetctl libunet-xdp unetd unetd.policy
		echo "=== unetd"
		getent group unet
		test -f /lib/systemd/system/unetd.service
		test -f /etc/unet/unetd.policy
		ls -l /lib/systemd/system/unetd.service /etc/unet/unetd.policy
		ls -l /etc/systemd/system/multi-user.target.wants/unetd.service
		/usr/sbin/unetd --help | grep -q -- '--pin-root'
		if command -v systemd-analyze >/dev/null; then
			systemd-analyze verify /lib/systemd/system/unetd.service
		fi
		# The installed daemon accepts the installed policy (group unet
		# exists) and opens its socket where the library looks.
		/usr/sbin/unetd --foreground >/tmp/unetd.log 2>&1 &
		upid=$!
		for i in $(seq 100); do grep -q 'info: ready' /tmp/unetd.log && break; sleep 0.05; done
		cat /tmp/unetd.log
		grep -q 'info: ready' /tmp/unetd.log
		test -S /run/unet/unetd.sock
		kill -TERM $upid
		wait $upid
		grep -q 'info: stopped' /tmp/unetd.log
		echo "=== unetd done"
		# An example from the -dev package's docs, against the installed library.
		cc $(pkg-config --cflags libunet-xdp) -o /tmp/pp /usr/share/doc/libunet-xdp-dev/examples/pingpong.c \
			$(pkg-config --libs libunet-xdp) -lm
		ldd /tmp/pp | grep 'libunet-xdp.so.@SOV@ => /.*lib/'
		ldd /usr/bin/unetctl | grep 'libunet-xdp'
		[ ! -e "$SRC_TREE/Makefile" ] || { echo "the source tree is visible"; exit 1; }
		echo "=== quick tour"
		bash -ex /pkgs/tour.sh
		echo "=== quick tour done"
	EOF
	sed -i "s/@SOV@/$(pkg_soversion)/g" "$w/inside.sh"
	SRC_TREE=$ROOT W=$w timeout -k 5 240 unshare --mount --propagation private bash -c '
		set -e
		m=$W/mnt
		mkdir -p "$m"
		mount -t tmpfs tmpfs "$m"
		mkdir -p "$m/up" "$m/work" "$m/root"
		mount -t overlay overlay -o "lowerdir=/,upperdir=$m/up,workdir=$m/work" "$m/root" ||
			{ echo "OVERLAY-FAILED"; exit 3; }
		r=$m/root
		mount -t proc proc "$r/proc"
		mount -t sysfs sysfs "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs tmpfs "$r/run"
		mount -t tmpfs tmpfs "$r/tmp"
		mount -t tmpfs tmpfs "$r/usr/local"
		mkdir -p "$r$SRC_TREE" && mount -t tmpfs tmpfs "$r$SRC_TREE"
		mkdir -p "$r/pkgs" && cp "$W"/*.deb "$W/tour.sh" "$W/inside.sh" "$r/pkgs/"
		SRC_TREE=$SRC_TREE chroot "$r" bash -x /pkgs/inside.sh
	' >"$T_DIR/install.log" 2>&1
	rc=$?
	cat "$T_DIR/install.log"
	grep -q OVERLAY-FAILED "$T_DIR/install.log" && skip "cannot mount an overlay of / here: installing into a copy of the machine is not possible"
	((rc == 0)) || fail "installing the packages or the quick tour failed in the copy of / (exit $rc)"
	grep -q '^rtt_us' "$T_DIR/install.log" || fail "the quick tour's pingpong printed no rtt_us line"
	grep -q '^=== unetd done' "$T_DIR/install.log" || fail "the unetd checks did not finish in the copy of /"
	note "deb test: $((SECONDS - start)) s in all"
}
