# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_uam.sh - U-Net Active Messages (docs/uam.md): the cmocka suite on a
# veth pair and the key-value example between two namespaces.  Sourced by
# run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"uam|xdp|150|Active Messages: 100k requests at 10% loss (+5% dup/reorder), 25k medium messages of every size at loss+dup+reorder, 64 MiB store+get at 5% loss, stalled receiver, SIGKILLed peer, kept buffers of refused sends given back, sent frames reaped in bulk and when the pool runs dry (test_uam)"
	"uam_kv|-|60|examples/kv: put/get over UAM between two namespaces at 10% injected loss"
	"uam_jumbo|xdp|90|Active Messages at MTU 9000: medium messages of every size around the frame and piece edges and stores/gets around the fragment edges, both ways, byte for byte, in 8992-byte frames; MTU 9000 against 1500: transfers fall back to 1492-byte frames, a medium message the small side cannot take is refused (EMSGSIZE) or fails its channel (ETIMEDOUT) without hanging (test_uam_jumbo)"
)

# U-Net Active Messages over a veth pair inside namespace a, both ends
# driven by one process (the peer-killed case forks).
t_uam() {
	run_pair_cmocka test_uam 8
}

# Active Messages at a jumbo MTU on a veth pair inside namespace a (the
# program sets the MTUs).
t_uam_jumbo() {
	run_pair_cmocka test_uam_jumbo 4
}

# The key-value example between the two namespaces, with loss on both
# interfaces: every put is read back.
t_uam_kv() {
	local kv=$BUILD/examples/kv
	[[ -x $kv ]] || fail "$kv not built"
	setup_ns
	T_MODE=skb
	attach a
	attach b
	ctl_a fault "$IF_A" --drop-ppm 100000 || fail "unetctl fault $IF_A failed"
	ctl_b fault "$IF_B" --drop-ppm 100000 || fail "unetctl fault $IF_B failed"
	unet_bg_b "$kv" server "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 --seconds 40 \
		>"$T_DIR/server.log" 2>&1
	local s=$UNET_BG_PID i
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready' "$T_DIR/server.log" && break
		kill -0 "$s" 2>/dev/null || { cat "$T_DIR/server.log"; fail "kv server exited"; }
		sleep 0.05
	done
	in_a "$kv" client "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --count 2000 \
		>"$T_DIR/client.log" 2>&1
	local rc=$?
	cat "$T_DIR/client.log"
	((rc == 0)) || fail "kv client exited with $rc"
	grep -q '^kv ok puts=2000 gets=2000' "$T_DIR/client.log" || fail "kv client did not verify 2000 puts"
	local d
	d=$(counter a drop_injected) || exit 1
	((d > 0)) || fail "no frames dropped by the injected loss on a"
	note "drop_injected on a = $d"
	stop "$s" "$T_DIR/server.log" "kv server"
}
