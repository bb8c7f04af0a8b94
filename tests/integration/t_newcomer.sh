# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_newcomer.sh - the README's commands on a machine that differs from
# ours the way a newcomer's does: the clone in root's 0700 home (here: a
# 0700 `mktemp -d` directory) under a path with a space, umask 077, two
# `make demo` started at once.  Sourced by run.sh (see lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"newcomer_clone|-|600|a copy of the tree in a 0700 directory, its path with a space, built under umask 077 (nobody cannot reach its binaries): two make demo started at once both finish with every row, nobody's unetd row included, one says the other shared its CPUs, no stage left behind; run.sh from that clone passes unetd_emulated/skb; make install under umask 077 installs nothing other users cannot read"
)

# nc_tree DIR: the source tree (no builds, no .git) copied into DIR.
nc_tree() {
	mkdir -p "$1" || fail "mkdir $1"
	tar -C "$ROOT" --exclude=./build --exclude=./build-san --exclude=./.git \
		--exclude=./bench-results -cf - . | tar -C "$1" -xf - || fail "copying the tree to $1"
}

# nc_stages TOP: the stages of builds under TOP (scripts/stage.sh notes
# each stage's build; other runs on the machine have stages of their own).
nc_stages() {
	local d
	for d in /tmp/unet-stage.*; do
		[[ -d $d && $(cat "$d/.source" 2>/dev/null) == "$1"/* ]] && echo "$d"
	done
}

t_newcomer_clone() {
	if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
		skip "where the clone sits is checked in the plain pass (make demo builds the plain tree)"
	fi
	local top clone before after rc1 rc2 out
	top=$(mktemp -d /tmp/unet-newcomer.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$top'")
	clone="$top/my clone/unet-xdp"
	nc_tree "$clone"
	[[ $(stat -c %a "$top") == 700 ]] || fail "mktemp -d made $top $(stat -c %a "$top"), want 700"
	before=$(nc_stages "$top")

	# Two demos at once, from the unbuilt tree, under umask 077: the
	# first to take the build lock builds, the other waits for it.  (The
	# runner's own variables stay out: make reads BUILD from the
	# environment.)
	local clean=(env -u UNET_TEST_KEEP_LOGS -u BUILD -u BUILD_TREE -u T_DIR -u WORK -u UNETCTL -u PEER -u INJECT -u UUDP -u KUDP)
	(cd "$clone" && umask 077 && PP_COUNT=300 ST_COUNT=3000 SP_SECS=1 exec "${clean[@]}" make demo) >"$T_DIR/demo1.log" 2>&1 &
	local p1=$!
	(cd "$clone" && umask 077 && PP_COUNT=300 ST_COUNT=3000 SP_SECS=1 exec "${clean[@]}" make demo) >"$T_DIR/demo2.log" 2>&1 &
	local p2=$!
	wait "$p1"
	rc1=$?
	wait "$p2"
	rc2=$?
	local i
	for i in 1 2; do
		note "demo $i: $(grep -c . "$T_DIR/demo$i.log") lines"
		grep -E 'Permission denied|demo: .*failed' "$T_DIR/demo$i.log" | head -5
	done
	((rc1 == 0)) || { tail -30 "$T_DIR/demo1.log"; fail "the first make demo exited $rc1"; }
	((rc2 == 0)) || { tail -30 "$T_DIR/demo2.log"; fail "the second make demo exited $rc2"; }
	# The scenario is real: nobody cannot reach the clone's build.
	[[ $(stat -c %a "$clone/build/examples/pingpong") == 700 ]] ||
		fail "umask 077 did not apply: pingpong is $(stat -c %a "$clone/build/examples/pingpong")"
	if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$clone/build/examples/pingpong"; then
		fail "nobody can run $clone/build/examples/pingpong: the test proves nothing"
	fi
	for i in 1 2; do
		out=$(cat "$T_DIR/demo$i.log")
		grep -qE '^U-Net, block, nobody via unetd +[0-9.]+ +[0-9.]+ +[0-9.]+$' <<<"$out" ||
			fail "demo $i: no round-trip row for nobody via unetd"
		grep -qE '^U-Net, spin +[0-9.]+ +[0-9.]+ +[0-9.]+$' <<<"$out" || fail "demo $i: no spinning row"
		grep -qE '^bandwidth, .* Gbit/s' <<<"$out" || fail "demo $i: no bandwidth line"
		grep -qx 'demo: done' <<<"$out" || fail "demo $i: no 'demo: done'"
	done
	grep -q 'demo: note: another demo ran at the same time' "$T_DIR/demo1.log" "$T_DIR/demo2.log" ||
		fail "neither demo said that another one ran beside it"
	after=$(nc_stages "$top")
	[[ $after == "$before" ]] || fail "a stage was left behind: $(comm -13 <(echo "$before") <(echo "$after"))"

	# One unetd test (nobody's pingpong over an emulated endpoint) run
	# by the clone's own runner on the clone's own build.
	out=$(cd "$clone" && "${clean[@]}" -u UNET_NETNS_RECORD \
		bash tests/integration/run.sh --build build --mode skb unetd_emulated 2>&1)
	echo "$out" | tail -15
	[[ $(tail -n 1 <<<"$out") == "1 passed, 0 failed, 0 skipped" ]] ||
		fail "unetd_emulated/skb from the 0700 clone did not pass"
	after=$(nc_stages "$top")
	[[ $after == "$before" ]] || fail "run.sh left a stage behind"

	# make install under umask 077: every directory and file it made
	# is readable (and directories searchable) by other users.
	(cd "$clone" && umask 077 && exec "${clean[@]}" make -s PREFIX=/usr/local DESTDIR="$top/dest" install) \
		>"$T_DIR/install.log" 2>&1 || { cat "$T_DIR/install.log"; fail "make install under umask 077 failed"; }
	out=$(find "$top/dest" -mindepth 1 \( -type d ! -perm -0055 \) -o \( -type f ! -perm -0044 \) -print)
	[[ -z $out ]] || fail "make install under umask 077 left these unreadable by others: $out"
	[[ -n $(find "$top/dest" -name libunet-xdp.pc) ]] || fail "make install made no .pc file"
	note "installed $(find "$top/dest" -type f | wc -l) files, all readable by others"
}
