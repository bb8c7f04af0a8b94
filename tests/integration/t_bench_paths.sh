# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_bench_paths.sh - unet-bench on the paths make bench measures past one
# IPv4 link: its udp and unet-udp transports over IPv6.  (make bench's
# IPv6 and router rows are not in bench.sh --quick, the smoke test's
# form check: this is their transports' check.)  Sourced by run.sh (see
# lib.sh; v6_enable is t_udp6.sh's).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"bench_ipv6|-|60|unet-bench over IPv6 ([ADDR]:PORT): kernel udp and unet-udp round trips on one link, every one answered, unet-udp's through U-Net; an IPv6 address beside an IPv4 one refused"
)

t_bench_ipv6() {
	local b=$BUILD/unet-bench t e out args
	[[ -x $b ]] || skip "$b is not built"
	setup_ns
	T_MODE=skb
	attach a
	attach b
	v6_enable "$NS_A" "$IF_A"
	v6_enable "$NS_B" "$IF_B"
	{ ip -n "$NS_A" addr add fd00:201::1/64 dev "$IF_A" nodad &&
		ip -n "$NS_B" addr add fd00:201::2/64 dev "$IF_B" nodad; } || fail "IPv6 addressing"
	for t in udp unet-udp; do
		args=()
		[[ $t == unet-udp ]] && args=(--iface "$IF_A" --xdp-mode skb)
		in_a "$b" pingpong --transport "$t" "${args[@]}" --local "[fd00:201::1]:5001" \
			--remote 10.201.0.2:5002 --count 10 >/dev/null 2>"$T_DIR/err" &&
			fail "$t: an IPv6 local address with an IPv4 remote one was taken"
		grep -q 'both' "$T_DIR/err" || fail "$t: mixed families refused without saying why: $(cat "$T_DIR/err")"
		[[ $t == unet-udp ]] && args=(--iface "$IF_B" --xdp-mode skb)
		unet_bg_b "$b" echo --transport "$t" "${args[@]}" --local "[fd00:201::2]:5002" \
			--remote "[fd00:201::1]:5001" --timeout 30 >"$T_DIR/echo-$t.out" 2>"$T_DIR/echo-$t.err"
		e=$UNET_BG_PID
		wait_until 10 "the $t echo" grep -q ' ready$' "$T_DIR/echo-$t.err"
		[[ $t == unet-udp ]] && args=(--iface "$IF_A" --xdp-mode skb)
		out=$(in_a "$b" pingpong --transport "$t" "${args[@]}" --local "[fd00:201::1]:5001" \
			--remote "[fd00:201::2]:5002" --size 64 --count 500 --warmup 20 --timeout 20 \
			2>"$T_DIR/ping-$t.err")
		echo "$out"
		cat "$T_DIR/ping-$t.err"
		stop "$e" "$T_DIR/echo-$t.err" "$t echo"
		jq -e --arg t "$t" '.transport == $t and .count == 500 and .lost == 0 and .p50_us > 0' \
			<<<"$out" >/dev/null || fail "$t over IPv6: not 500 round trips, all answered"
	done
	# U-Net carried unet-udp's (rx: 500 measured, 20 warm-up, end markers)
	grep -Eq 'unet-udp: rx (5[2-9][0-9]|[6-9][0-9][0-9]) ' "$T_DIR/echo-unet-udp.err" ||
		fail "the unet-udp echo did not receive the round trips through U-Net: $(cat "$T_DIR/echo-unet-udp.err")"
}
