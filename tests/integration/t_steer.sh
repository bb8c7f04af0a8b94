# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_steer.sh - unetctl steer: the flow steering rules of an endpoint's
# routable channels and UDP and TCP ports.  Sourced by run.sh (see lib.sh
# for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"steer|-|60|4-queue veth, an endpoint on queues 1-2 with a routable channel, a connected UDP port and a TCP listener over IPv4 and the same over IPv6: unetctl steer prints exactly their six ethtool rules to queue 1 (udp4, tcp4, udp6, tcp6; text and JSON fields), endpoint list shows queue_mask 6; --install and --remove fail with veth's refusal (EOPNOTSUPP) and change nothing; bad input is refused"
)

# Every table of IF_A without its counters: what --install must not change.
steer_tables() {
	local what
	for what in endpoint channel udp tcp; do
		ctl_a --json "$what" list "$IF_A" |
			jq -c '[.. | objects | select(has("pid"))
				| del(.delivered, .delivered_bytes, .drops, .drop_wrong_src,
				      .drop_no_socket, .drop_filter, .drop_injected)]' ||
			fail "unetctl $what list $IF_A failed"
	done
}

t_steer() {
	setup_ns 4
	local chan_port=61000 log=$T_DIR/hold.log pid ep sport sport6 out want before after rc err
	local a6=fd00:5::1 b6=fd00:5::2 line words
	ctl_a attach "$IF_A" --mode skb --chan-port $chan_port >/dev/null ||
		fail "attach $IF_A failed"
	# IPv6 on the link (v6_enable: t_udp6.sh), b's address answering
	# the IPv6 channel's neighbour solicitation
	v6_enable "$NS_A" "$IF_A"
	v6_enable "$NS_B" "$IF_B"
	{ ip -n "$NS_A" addr add "$a6/64" dev "$IF_A" nodad &&
		ip -n "$NS_B" addr add "$b6/64" dev "$IF_B" nodad; } || fail "IPv6 addressing"
	unet_bg_a "$BUILD/tools/unet-steer-hold" "$IF_A" 0x6 10 "$IP_B" 20 \
		"$IP_A:7000" "$IP_B:5000" "$IP_A:8000" 50 \
		11 "$b6" 21 "$a6" 7001 "$b6" 5001 8001 >"$log" 2>&1
	pid=$UNET_BG_PID
	ep=$(wait_ready "$log" "$pid") || exit 1
	grep -q "queue_mask=0x6" "$log" || fail "the endpoint did not bind queues 1-2: $(cat "$log")"

	out=$(endpoint_json a) || exit 1
	echo "endpoints: $out"
	[[ $(jq -r --argjson id "$ep" '.[] | select(.id == $id) | .queue_mask' <<<"$out") == 6 ]] ||
		fail "endpoint list does not show endpoint $ep's queue_mask 6: $out"

	# The peer's channel source port, as the wire format derives it from
	# its tag (docs/wire-format.md), worked out here on its own.
	sport=$((0xC000 | (20 * 0x9E37 & 0x3FFF)))
	sport6=$((0xC000 | (21 * 0x9E37 & 0x3FFF)))
	want="ethtool -N $IF_A flow-type udp4 src-ip $IP_B dst-ip $IP_A src-port $sport dst-port $chan_port action 1  # endpoint $ep  channel tag 10
ethtool -N $IF_A flow-type udp6 src-ip $b6 dst-ip $a6 src-port $sport6 dst-port $chan_port action 1  # endpoint $ep  channel tag 11
ethtool -N $IF_A flow-type udp4 src-ip $IP_B dst-ip $IP_A src-port 5000 dst-port 7000 action 1  # endpoint $ep  udp port 7000
ethtool -N $IF_A flow-type udp6 src-ip $b6 dst-ip $a6 src-port 5001 dst-port 7001 action 1  # endpoint $ep  udp port 7001
ethtool -N $IF_A flow-type tcp4 dst-ip $IP_A dst-port 8000 action 1  # endpoint $ep  tcp port 8000
ethtool -N $IF_A flow-type tcp6 dst-ip $a6 dst-port 8001 action 1  # endpoint $ep  tcp port 8001"
	out=$(ctl_a steer "$IF_A" 2>"$T_DIR/steer.err") ||
		fail "steer $IF_A failed: $(cat "$T_DIR/steer.err")"
	echo "$out"
	cat "$T_DIR/steer.err"
	[[ $out == "$want" ]] || fail "steer printed:
$out
want:
$want"
	grep -q "^unetctl: note: endpoint $ep on $IF_A bound queues 1,2: its rules send to queue 1, the first$" \
		"$T_DIR/steer.err" || fail "steer does not say which queue and why: $(cat "$T_DIR/steer.err")"
	grep -q "^unetctl: note: $IF_A's driver has no ntuple filters (its rule count: Operation not supported): these rules cannot be installed on it$" \
		"$T_DIR/steer.err" || fail "steer does not say veth cannot take the rules: $(cat "$T_DIR/steer.err")"
	# --endpoint picks the same; the lines paste: bash runs them as
	# ethtool commands (a stand-in records the arguments).
	[[ $(ctl_a steer "$IF_A" --endpoint "$ep" 2>/dev/null) == "$want" ]] ||
		fail "steer --endpoint $ep differs"
	mkdir -p "$T_DIR/bin"
	: >"$T_DIR/pasted"
	printf '#!/bin/sh\necho "$@" >>"%s"\n' "$T_DIR/pasted" >"$T_DIR/bin/ethtool"
	chmod +x "$T_DIR/bin/ethtool"
	PATH="$T_DIR/bin:$PATH" bash -e <<<"$out" || fail "the printed lines do not run as commands"
	[[ $(wc -l <"$T_DIR/pasted") == 6 ]] && grep -qx -- "-N $IF_A flow-type tcp4 dst-ip $IP_A dst-port 8000 action 1" \
		"$T_DIR/pasted" && grep -qx -- "-N $IF_A flow-type tcp6 dst-ip $a6 dst-port 8001 action 1" \
		"$T_DIR/pasted" || fail "pasted lines ran as: $(cat "$T_DIR/pasted")"
	# ethtool itself parses them, IPv6 addresses included (it stops at
	# the device, which has no ntuple filters)
	if command -v ethtool >/dev/null; then
		while IFS= read -r line; do
			read -ra words <<<"${line%%  #*}"
			err=$(in_a "${words[@]}" 2>&1) && fail "ethtool took a rule on veth: $line"
			grep -q '^Cannot insert classification rule$' <<<"$err" ||
				fail "ethtool did not parse '$line': $err"
		done <<<"$out"
	fi

	# JSON: each field on its own.
	out=$(ctl_a --json steer "$IF_A" 2>/dev/null) || fail "steer --json failed"
	echo "$out"
	jq -e --arg a "$IP_A" --arg b "$IP_B" --argjson ep "$ep" --argjson sp "$sport" \
		--argjson cp $chan_port --arg a6 "$a6" --arg b6 "$b6" --argjson sp6 "$sport6" \
		'.schema_version == 1 and (.rules | length == 6) and
		(.rules[0] | .object == "channel" and .tag == 10 and .endpoint == $ep and
			.flow_type == "udp4" and .src_ip == $b and .dst_ip == $a and
			.src_port == $sp and .dst_port == $cp and .queue == 1 and .queue_mask == 6) and
		(.rules[1] | .object == "channel" and .tag == 11 and .flow_type == "udp6" and
			.src_ip == $b6 and .dst_ip == $a6 and .src_port == $sp6 and
			.dst_port == $cp and .queue == 1) and
		(.rules[2] | .object == "udp" and .port == 7000 and .flow_type == "udp4" and
			.src_ip == $b and .dst_ip == $a and .src_port == 5000 and .dst_port == 7000 and
			.queue == 1) and
		(.rules[3] | .object == "udp" and .port == 7001 and .flow_type == "udp6" and
			.src_ip == $b6 and .dst_ip == $a6 and .src_port == 5001 and
			.dst_port == 7001 and .queue == 1) and
		(.rules[4] | .object == "tcp" and .port == 8000 and .flow_type == "tcp4" and
			.src_ip == "any" and .dst_ip == $a and .src_port == 0 and .dst_port == 8000 and
			.queue == 1) and
		(.rules[5] | .object == "tcp" and .port == 8001 and .flow_type == "tcp6" and
			.src_ip == "any" and .dst_ip == $a6 and .src_port == 0 and
			.dst_port == 8001 and .queue == 1)' <<<"$out" >/dev/null ||
		fail "steer --json fields are wrong: $out"

	# veth has no ntuple filters: the driver's refusal, exit 1, nothing
	# on stdout, nothing changed.
	before=$(steer_tables)
	for op in --install --remove; do
		out=$(ctl_a steer "$IF_A" $op 2>"$T_DIR/op.err")
		rc=$?
		err=$(grep -v '^unetctl: note: ' "$T_DIR/op.err")
		echo "$op: rc=$rc stdout '$out' stderr: $err"
		((rc == 1)) || fail "steer $op on veth exited $rc, want 1"
		[[ -z $out ]] || fail "steer $op printed on stdout: $out"
		grep -q "^unetctl: $IF_A: the driver refused to .*: Operation not supported (no ntuple filters on this device; see ntuple-filters in ethtool -k $IF_A)$" \
			<<<"$err" || fail "steer $op does not report the driver's refusal: $err"
	done
	ctl_a steer "$IF_A" --install >/dev/null 2>"$T_DIR/install.err"
	grep -q "^unetctl: refused: ethtool -N $IF_A flow-type udp4 src-ip $IP_B dst-ip $IP_A src-port $sport dst-port $chan_port action 1$" \
		"$T_DIR/install.err" || fail "--install does not name the refused rule: $(cat "$T_DIR/install.err")"
	after=$(steer_tables)
	[[ $before == "$after" ]] || fail "--install changed the tables:
$before
$after"
	if command -v ethtool >/dev/null; then
		in_a ethtool -k "$IF_A" | grep -x 'ntuple-filters: off \[fixed\]' ||
			fail "ethtool -k $IF_A: ntuple filters not 'off [fixed]'"
	fi

	# Bad input.
	expect_err "no interface" "no such interface: nosuch0" ctl_a steer nosuch0
	expect_err "endpoint range" "invalid endpoint: 64 \(0\.\.63\)" ctl_a steer "$IF_A" --endpoint 64
	expect_err "endpoint not live" "no live endpoint $((ep + 1)) on $IF_A" \
		ctl_a steer "$IF_A" --endpoint $((ep + 1))
	expect_err "both" "^unetctl: --install and --remove together" ctl_a steer "$IF_A" --install --remove
	expect_err "no iface" "missing arguments" ctl_a steer
	expect_err "not attached" "unet program not attached to $IF_B" ctl_b steer "$IF_B"
	expect_err "unknown option" "unknown option: --queue" ctl_a steer "$IF_A" --queue 1
	stop "$pid" "$log" "unet-steer-hold"
	# The endpoint gone: nothing to steer, said so, nothing printed.
	out=$(ctl_a steer "$IF_A" 2>"$T_DIR/empty.err") || fail "steer with no endpoint failed"
	[[ -z $out ]] && grep -q "nothing to steer on $IF_A" "$T_DIR/empty.err" ||
		fail "steer with no endpoint: '$out' $(cat "$T_DIR/empty.err")"
}
