# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_jumbo.sh - frames larger than one chunk: the program attached at a
# jumbo MTU, raw U-Net messages in several pieces both ways, links of
# different MTUs.  Sourced by run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"jumbo_attach|xdp|60|the program attaches at MTU 9000 on veth (a program without fragment support cannot, natively), and frames still reach the kernel beside it"
)

# set_mtu MTU: both ends of the test link.
set_mtu() {
	in_a ip link set "$IF_A" mtu "$1" || fail "cannot set MTU $1 on $IF_A"
	in_b ip link set "$IF_B" mtu "$1" || fail "cannot set MTU $1 on $IF_B"
}

t_jumbo_attach() {
	setup_ns
	set_mtu 9000
	attach a
	attach b
	# The kernel's traffic beside the program, in pieces: a ping of a
	# full jumbo frame each way.
	in_a ping -c 1 -W 5 -M do -s 8972 "$IP_B" >/dev/null || fail "8972-byte ping a -> b lost"
	in_b ping -c 1 -W 5 -M do -s 8972 "$IP_A" >/dev/null || fail "8972-byte ping b -> a lost"
	local p
	p=$(counter a pass)
	((p > 0)) || fail "program on a saw no frames (pass=$p)"
}
