# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# lib.sh - what the reproducers under repro/ share (sourced after
# scripts/netns.sh and unet_netns_setup): their daemon.
#
# repro_unetd POLICY [UNETD_OPTION...]: unetd in namespace b, its policy
# POLICY (one rule a line), socket $DIR/unetd.sock, log $DIR/unetd.log,
# pins under UNET_PIN_ROOT; its pid in DAEMON.  Waits (5 s at most) for
# its "ready" line.
repro_unetd() {
	local i
	printf '%s\n' "$1" >"$DIR/policy"
	chmod 644 "$DIR/policy"
	shift
	unet_bg_b "$BUILD/unetd" --foreground --socket "$DIR/unetd.sock" --policy "$DIR/policy" \
		--pin-root "$UNET_PIN_ROOT" "$@" >"$DIR/unetd.log" 2>&1
	DAEMON=$UNET_BG_PID
	for ((i = 0; i < 100; i++)); do
		grep -q 'unetd: info: ready' "$DIR/unetd.log" && break
		sleep 0.05
	done
}
