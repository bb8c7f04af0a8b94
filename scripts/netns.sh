# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# netns.sh - two network namespaces joined by a veth pair, for unet-xdp
# tests and demos.  Source it; do not run it.
#
#   source scripts/netns.sh
#   unet_netns_setup "ut$$" || exit 1     # or: unet_netns_setup "ut$$" 4
#   unet_netns_trap                       # cleanup on EXIT, INT, TERM
#   in_a build/unetctl attach "$IF_A"
#   unet_bg_b build/tools/unet-peer echo "$IF_B" --tag 2 --peer "$MAC_A" ...
#
# Everything it creates is recorded in shell variables of the sourcing
# shell and removed by unet_netns_cleanup, which is idempotent and safe to
# call after a partial setup.  One setup per shell at a time: run several
# from subshells.  Needs root, iproute2 and a kernel with bpffs.
#
# Why UNET_PIN_ROOT: `ip netns exec` enters a new mount namespace and
# remounts /sys, so /sys/fs/bpf is hidden from the commands it runs.  The
# setup mounts a private bpffs on a fresh temporary directory instead;
# that mount is copied into every mount namespace `ip netns exec` creates,
# so the library, unetctl and the tools in both namespaces see the same
# pins through $UNET_PIN_ROOT.

# State of the current setup (empty: nothing created).
_UNET_NS_CREATED=()	# namespaces we created
_UNET_BPFFS_DIR=""	# temp dir we created
_UNET_BPFFS_MOUNTED=0	# 1 once bpffs is mounted on it
_UNET_BG_PIDS=()	# background pids started by unet_bg_a/unet_bg_b

# _unet_ns_record KIND VALUE - when $UNET_NETNS_RECORD names a file, append
# "KIND VALUE" to it: a supervisor that has to SIGKILL this shell reads it
# to remove what was left ("ns NAME", "bpffs DIR").
_unet_ns_record() {
	[[ -n ${UNET_NETNS_RECORD:-} ]] && echo "$1 $2" >>"$UNET_NETNS_RECORD"
	return 0
}

# _unet_ns_err MSG... - print a one-line error on stderr, return 1.
_unet_ns_err() {
	echo "netns.sh: $*" >&2
	return 1
}

# _unet_ns_mac NS IFACE - print the MAC address of IFACE inside NS.
_unet_ns_mac() {
	ip -n "$1" -o link show dev "$2" 2>/dev/null |
		sed -n 's/.*link\/ether \([0-9a-f:]\{17\}\).*/\1/p'
}

# unet_netns_setup NAME_PREFIX [NQUEUES]
#   Create namespaces "${NAME_PREFIX}a" and "${NAME_PREFIX}b" and a veth
#   pair "${NAME_PREFIX}a0" (in a) <-> "${NAME_PREFIX}b0" (in b), with
#   NQUEUES tx and rx queues on both ends when NQUEUES > 1 (default 1).
#   Brings up lo and the veth ends, addresses them 10.201.0.1/24 (a) and
#   10.201.0.2/24 (b), turns IPv6 off in both namespaces (no background
#   chatter), mounts a private bpffs on a fresh temp dir.  The prefix must
#   be unique (include $$ or a random suffix) and at most 13 characters so
#   interface names stay within 15.  With UNET_NETNS_RECORD set to a file,
#   what it creates is also listed there (see unet_netns_rescue).
#   Exports NS_A NS_B IF_A IF_B MAC_A MAC_B IP_A IP_B UNET_PIN_ROOT.
#   Returns 0, or 1 after printing an error and undoing what it did.
unet_netns_setup() {
	local prefix=${1:-} nq=${2:-1}
	[[ -n $prefix ]] || { _unet_ns_err "usage: unet_netns_setup NAME_PREFIX [NQUEUES]"; return 1; }
	[[ $prefix =~ ^[A-Za-z0-9_.-]+$ ]] || { _unet_ns_err "bad prefix '$prefix'"; return 1; }
	((${#prefix} <= 13)) || { _unet_ns_err "prefix '$prefix' longer than 13 characters"; return 1; }
	if ! [[ $nq =~ ^[0-9]+$ ]] || ((nq < 1 || nq > 64)); then
		_unet_ns_err "bad queue count '$nq'"
		return 1
	fi
	if ((${#_UNET_NS_CREATED[@]} > 0)) || [[ -n $_UNET_BPFFS_DIR ]]; then
		_unet_ns_err "a setup is active in this shell: call unet_netns_cleanup first"
		return 1
	fi

	export NS_A="${prefix}a" NS_B="${prefix}b"
	export IF_A="${prefix}a0" IF_B="${prefix}b0"
	export IP_A=10.201.0.1 IP_B=10.201.0.2
	local qargs=()
	((nq > 1)) && qargs=(numtxqueues "$nq" numrxqueues "$nq")

	local ns
	for ns in "$NS_A" "$NS_B"; do
		if ip netns list | awk '{print $1}' | grep -qxF "$ns"; then
			_unet_ns_err "namespace $ns already exists"
			unet_netns_cleanup
			return 1
		fi
		ip netns add "$ns" || { _unet_ns_err "ip netns add $ns failed"; unet_netns_cleanup; return 1; }
		_UNET_NS_CREATED+=("$ns")
		_unet_ns_record ns "$ns"
		ip -n "$ns" link set lo up || { _unet_ns_err "lo up in $ns failed"; unet_netns_cleanup; return 1; }
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
	done

	# Create the pair inside namespace a, then move one end: the names
	# never exist in the root namespace, so they cannot clash there.
	if ! ip -n "$NS_A" link add "$IF_A" "${qargs[@]}" type veth \
		peer name "$IF_B" "${qargs[@]}" netns "$NS_B"; then
		_unet_ns_err "creating veth $IF_A <-> $IF_B failed"
		unet_netns_cleanup
		return 1
	fi
	if ! { ip -n "$NS_A" addr add "$IP_A/24" dev "$IF_A" &&
		ip -n "$NS_B" addr add "$IP_B/24" dev "$IF_B" &&
		ip -n "$NS_A" link set "$IF_A" up &&
		ip -n "$NS_B" link set "$IF_B" up; }; then
		_unet_ns_err "configuring $IF_A/$IF_B failed"
		unet_netns_cleanup
		return 1
	fi
	MAC_A=$(_unet_ns_mac "$NS_A" "$IF_A")
	MAC_B=$(_unet_ns_mac "$NS_B" "$IF_B")
	export MAC_A MAC_B
	if [[ -z $MAC_A || -z $MAC_B ]]; then
		_unet_ns_err "cannot read the MAC addresses of $IF_A/$IF_B"
		unet_netns_cleanup
		return 1
	fi

	_UNET_BPFFS_DIR=$(mktemp -d /tmp/unet-bpffs.XXXXXX) || {
		_unet_ns_err "mktemp failed"
		_UNET_BPFFS_DIR=""
		unet_netns_cleanup
		return 1
	}
	_unet_ns_record bpffs "$_UNET_BPFFS_DIR"
	if ! mount -t bpf -o mode=0700 bpf "$_UNET_BPFFS_DIR"; then
		_unet_ns_err "mount -t bpf on $_UNET_BPFFS_DIR failed (no bpffs?)"
		unet_netns_cleanup
		return 1
	fi
	_UNET_BPFFS_MOUNTED=1
	export UNET_PIN_ROOT="$_UNET_BPFFS_DIR"
	return 0
}

# unet_netns_add NAME
#   After unet_netns_setup: one more namespace NAME (lo up, IPv6 off),
#   deleted by unet_netns_cleanup with the others.  For fixtures with more
#   hosts than a and b (a router between two subnets).  Returns 0 or 1.
unet_netns_add() {
	local ns=$1
	[[ $ns =~ ^[A-Za-z0-9_.-]+$ ]] || { _unet_ns_err "bad namespace name '$ns'"; return 1; }
	if ip netns list | awk '{print $1}' | grep -qxF "$ns"; then
		_unet_ns_err "namespace $ns already exists"
		return 1
	fi
	ip netns add "$ns" || { _unet_ns_err "ip netns add $ns failed"; return 1; }
	_UNET_NS_CREATED+=("$ns")
	_unet_ns_record ns "$ns"
	ip -n "$ns" link set lo up || { _unet_ns_err "lo up in $ns failed"; return 1; }
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
	return 0
}

# unet_netns_router
#   After unet_netns_setup: b becomes a router to a second subnet.  A
#   third namespace NS_C ("${prefix}c", made with unet_netns_add) joined
#   to b by a veth pair "${prefix}rc" (in b, 10.202.0.1/24) <-> IF_C
#   "${prefix}c0" (in c, IP_C 10.202.0.2/24); b forwards IPv4 (reverse
#   path filtering off), a's default route goes through b (10.201.0.2),
#   c's through 10.202.0.1: a and c are on two subnets, one router apart.
#   The tests' routed fixture and make bench's routed rows both stand on
#   it.  Exports NS_C IF_C IF_RC IP_C MAC_C; defines in_c.  Returns 0, or
#   1 after printing an error (unet_netns_cleanup removes what it made).
unet_netns_router() {
	local prefix=${NS_A%a}
	[[ -n ${NS_A:-} && -n ${NS_B:-} ]] || { _unet_ns_err "unet_netns_router: no setup"; return 1; }
	export NS_C="${prefix}c" IF_C="${prefix}c0" IF_RC="${prefix}rc" IP_C=10.202.0.2
	unet_netns_add "$NS_C" || return 1
	if ! ip -n "$NS_B" link add "$IF_RC" type veth peer name "$IF_C" netns "$NS_C"; then
		_unet_ns_err "creating veth $IF_RC <-> $IF_C failed"
		return 1
	fi
	if ! { ip netns exec "$NS_B" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0 >/dev/null &&
		ip -n "$NS_B" addr add 10.202.0.1/24 dev "$IF_RC" &&
		ip -n "$NS_B" link set "$IF_RC" up &&
		ip -n "$NS_C" addr add "$IP_C/24" dev "$IF_C" &&
		ip -n "$NS_C" link set "$IF_C" up &&
		ip -n "$NS_C" route add default via 10.202.0.1 &&
		ip -n "$NS_A" route add default via "$IP_B"; }; then
		_unet_ns_err "configuring the router $NS_B between $NS_A and $NS_C failed"
		return 1
	fi
	MAC_C=$(_unet_ns_mac "$NS_C" "$IF_C")
	export MAC_C
	return 0
}
in_c() { ip netns exec "$NS_C" "$@"; }
# unet_bg_c CMD...: unet_bg_a / unet_bg_b for namespace c.
unet_bg_c() {
	ip netns exec "$NS_C" "$@" &
	UNET_BG_PID=$!
	_UNET_BG_PIDS+=("$UNET_BG_PID")
}

# unet_netns_rescue FILE
#   Remove what a killed shell recorded in FILE (see UNET_NETNS_RECORD):
#   delete its namespaces, unmount and remove its directories.  For a
#   supervisor whose child could not run its own cleanup.  Returns 0.
unet_netns_rescue() {
	local kind val
	[[ -f ${1:-} ]] || return 0
	while read -r kind val; do
		case $kind in
		ns)
			# What still runs in the test's namespace was started by the
			# test (a tool that ignored its TERM, under a killed
			# timeout): end it, or it outlives the namespace's name.
			ip netns pids "$val" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
			ip netns del "$val" 2>/dev/null || true
			;;
		bpffs | mount)
			umount "$val" 2>/dev/null || umount -l "$val" 2>/dev/null || true
			rmdir "$val" 2>/dev/null || true
			;;
		esac
	done <"$1"
	return 0
}

# unet_netns_cleanup
#   Kill the background processes started with unet_bg_a/unet_bg_b (only
#   those pids: TERM, then KILL after up to 2 s), delete the namespaces this
#   shell created (which deletes the veth pair), unmount and remove the
#   bpffs directory.  Idempotent; safe after a partial setup and from a
#   trap.  Always returns 0.
unet_netns_cleanup() {
	local pid ns i
	if ((${#_UNET_BG_PIDS[@]} > 0)); then
		for pid in "${_UNET_BG_PIDS[@]}"; do
			kill -TERM "$pid" 2>/dev/null || true
		done
		for ((i = 0; i < 20; i++)); do
			local alive=0
			for pid in "${_UNET_BG_PIDS[@]}"; do
				kill -0 "$pid" 2>/dev/null && alive=1
			done
			((alive)) || break
			sleep 0.1
		done
		for pid in "${_UNET_BG_PIDS[@]}"; do
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		done
		_UNET_BG_PIDS=()
	fi
	if ((${#_UNET_NS_CREATED[@]} > 0)); then
		for ns in "${_UNET_NS_CREATED[@]}"; do
			ip netns del "$ns" 2>/dev/null || true
		done
		_UNET_NS_CREATED=()
	fi
	if [[ -n $_UNET_BPFFS_DIR ]]; then
		if ((_UNET_BPFFS_MOUNTED)); then
			umount "$_UNET_BPFFS_DIR" 2>/dev/null || umount -l "$_UNET_BPFFS_DIR" 2>/dev/null || true
			_UNET_BPFFS_MOUNTED=0
		fi
		rmdir "$_UNET_BPFFS_DIR" 2>/dev/null || true
		_UNET_BPFFS_DIR=""
	fi
	return 0
}

# unet_netns_trap
#   Install traps so unet_netns_cleanup runs when the shell exits, and
#   INT/TERM exit the shell (running the EXIT trap) with 130/143.
#   Replaces existing EXIT/INT/TERM traps; callers with their own cleanup
#   should call unet_netns_cleanup from it instead.
unet_netns_trap() {
	trap unet_netns_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# in_a CMD... / in_b CMD...
#   Run CMD in namespace a / b (ip netns exec) in the foreground; returns
#   its exit status.  UNET_PIN_ROOT and the rest of the environment pass
#   through.
in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

# unet_bg_a CMD... / unet_bg_b CMD...
#   Start CMD in namespace a / b in the background and record its pid
#   (ip netns exec execs CMD, so the pid is CMD's own) for
#   unet_netns_cleanup.  The pid is also left in $! and in UNET_BG_PID.
#   Redirect output as with any command: unet_bg_a cmd >log 2>&1
unet_bg_a() {
	ip netns exec "$NS_A" "$@" &
	UNET_BG_PID=$!
	_UNET_BG_PIDS+=("$UNET_BG_PID")
}
unet_bg_b() {
	ip netns exec "$NS_B" "$@" &
	UNET_BG_PID=$!
	_UNET_BG_PIDS+=("$UNET_BG_PID")
}

# unet_bg_wait PID TIMEOUT_S
#   Wait for a background pid to exit, at most TIMEOUT_S seconds (may be
#   fractional).  Returns its exit status, or 124 (and kills it with KILL)
#   on timeout.
unet_bg_wait() {
	local pid=$1 t=${2:-10} n
	n=$(awk -v t="$t" 'BEGIN { printf "%d", t * 10 }')
	while ((n-- > 0)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}
