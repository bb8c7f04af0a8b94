#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# hosts.sh - N network-namespace "hosts" on one Linux bridge, and MPI jobs
# across them (docs/parallel.md).
#
#   hosts.sh up N [--name NAME] [--mode skb|native] [--mtu M] [--subnets 1|2] [--build DIR | --unetctl PATH --provider-dir DIR]
#   hosts.sh mpirun NAME [--net NET] [--timeout S] [--np P] [MPIRUN-ARGS] -- PROG [ARGS]
#   hosts.sh fault NAME PPM
#   hosts.sh exec NAME K -- CMD [ARGS]
#   hosts.sh down NAME
#   hosts.sh run N [--mode M] [--subnets 1|2] [--build DIR | --unetctl PATH --provider-dir DIR] [--net NET] [--timeout S] [MPIRUN-ARGS] -- PROG [ARGS]
#   hosts.sh list
#
# `up` makes, for a run name NAME (default "uh<pid>"; at most 10
# characters, unique per run so parallel runs cannot collide):
#   - namespace NAMEbr holding bridge "br0" with 10.202.0.254/24: the
#     switch, and where mpirun runs (nothing touches the root namespace's
#     network);
#   - namespaces NAMEh1..NAMEhN, each with a veth "eth0" (10.202.0.K/24)
#     whose peer "pK" is a port of br0, lo up, IPv6 off; --mtu M sets
#     every link's MTU (1500 by default; 9000 for jumbo frames);
#   - --subnets 2: the even hosts on a second bridge "br1" in the same
#     namespace, 10.203.0.K/24, and that namespace routes between the two
#     subnets (10.202.0.254, 10.203.0.254): every pair of neighbours in
#     the hostfile, ranks 0 and 1 of a job included, talks through a
#     router.  The hosts get a route to the other subnet, no default
#     route (a name lookup then fails at once instead of waiting for a
#     name server nobody can reach);
#   - a private bpffs per host on /tmp/unet-hosts/NAME/hK/bpf (the host's
#     UNET_PIN_ROOT: each host has its own pins, as real machines have
#     their own /sys/fs/bpf), and the unet XDP program attached to every
#     eth0 with unetctl (skb mode by default);
#   - /tmp/unet-hosts/NAME/{hostfile,agent,hosts.env}: the hostfile (one
#     slot per host) and the rsh agent Open MPI's launcher uses to start
#     its orted on a host: `ip netns exec NAMEhK unshare --uts` with the
#     host name set to NAMEhK and UNET_PIN_ROOT / FI_UNET_IFACE set.
# `mpirun` runs one MPI job over NET across the hosts, time-bounded
# (default 120 s; on expiry every process in the run's namespaces is
# killed and the exit status is 124; so on TERM or INT, status 143/130):
#   unet     Open MPI cm PML + ofi MTL + our libfabric provider
#            (FI_PROVIDER_PATH=the provider's directory, FI_PROVIDER=unet)
#                                                               [default]
#   ofi-tcp  the same MTL over libfabric's tcp provider
#   ofi-udp  the same MTL over libfabric's udp provider (udp;ofi_rxd)
#   tcp      Open MPI's ob1 PML with its tcp BTL (the kernel's TCP)
# `fault` sets the XDP program's frame drop rate (parts per million, the
# unet_faults test hook) on every host.  `exec` runs CMD on host K (in
# its namespace, with its UNET_PIN_ROOT and FI_UNET_IFACE).  `down` kills what runs in the
# namespaces, deletes them, unmounts the bpffs and removes the state
# directory; idempotent.  `run` is up + mpirun + down in one, with
# cleanup on any exit.  Needs root, iproute2, Open MPI (mpirun).
#
# Which unetctl and which provider (libunet-fi.so): --build DIR takes
# both from a build tree (DIR/unetctl, DIR/libunet-fi.so); --unetctl PATH
# and --provider-dir DIR name each (and override --build's).  With none
# of them: this source tree's build/ when it has been built, else the
# installed ones, unetctl from PATH and the provider from the directory
# the installed libfabric loads providers from (libdir/libfabric).
#
# Exit status: the job's, 124 on timeout, 1 on setup errors, 2 on usage.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
STATE_ROOT=${UNET_HOSTS_STATE:-/tmp/unet-hosts}
SUBNET=10.202.0.0/24
NET_PREFIX=10.202.0
BR_IP=10.202.0.254
# --subnets 2: the second subnet, and what covers both (for Open MPI's
# interface selection, which must match every host)
NET_PREFIX2=10.203.0
SUBNETS2=10.202.0.0/15

usage() {
	sed -n '/^#   hosts.sh /s/^#   //p' "${BASH_SOURCE[0]}"
}

die() {
	echo "hosts.sh: $*" >&2
	exit 1
}

# installed_provider_dir: where the installed libfabric loads providers
# from: its libdir/libfabric (libfabric-dev's .pc says the libdir; without
# it, the directory of the libfabric.so.1 the dynamic linker finds).
installed_provider_dir() {
	local lib
	if lib=$(pkg-config --variable=libdir libfabric 2>/dev/null) && [[ -n $lib ]]; then
		echo "$lib/libfabric"
		return
	fi
	lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libfabric.so.1" { print $NF; exit }')
	[[ -n $lib ]] && echo "$(dirname "$lib")/libfabric"
}

# ---- up ----------------------------------------------------------------

# host_ns NAME K / br_ns NAME: namespace names.
host_ns() { echo "${1}h$2"; }
br_ns() { echo "${1}br"; }

# record NAME KIND VALUE: what `down` must remove, appended as it is made;
# also to $UNET_NETNS_RECORD when set (the test runner's list of what to
# remove if it has to SIGKILL a test, scripts/netns.sh unet_netns_rescue).
record() {
	echo "$2 $3" >>"$STATE_ROOT/$1/resources"
	[[ -n ${UNET_NETNS_RECORD:-} ]] && echo "$2 $3" >>"$UNET_NETNS_RECORD"
	return 0
}

do_up() {
	local n="" name="uh$$" mode=skb build="" unetctl="" provdir="" mtu=1500 subnets=1
	while (($#)); do
		case $1 in
		--name) name=${2:-}; shift 2 || die "--name needs a value" ;;
		--mode) mode=${2:-}; shift 2 || die "--mode needs a value" ;;
		--mtu) mtu=${2:-}; shift 2 || die "--mtu needs a value" ;;
		--subnets) subnets=${2:-}; shift 2 || die "--subnets needs a value" ;;
		--build) build=${2:-}; shift 2 || die "--build needs a value" ;;
		--unetctl) unetctl=${2:-}; shift 2 || die "--unetctl needs a value" ;;
		--provider-dir) provdir=${2:-}; shift 2 || die "--provider-dir needs a value" ;;
		-*) echo "hosts.sh up: unknown option $1" >&2; exit 2 ;;
		*) [[ -z $n ]] || { echo "hosts.sh up: one N only" >&2; exit 2; }; n=$1; shift ;;
		esac
	done
	[[ $n =~ ^[0-9]+$ ]] && ((n >= 2 && n <= 16)) || { echo "hosts.sh up: N must be 2..16" >&2; exit 2; }
	[[ $name =~ ^[A-Za-z][A-Za-z0-9]{0,9}$ ]] || { echo "hosts.sh up: NAME: a letter, then up to 9 letters or digits" >&2; exit 2; }
	[[ $mode == skb || $mode == native ]] || { echo "hosts.sh up: --mode skb|native" >&2; exit 2; }
	[[ $mtu =~ ^[0-9]+$ ]] && ((mtu >= 1280 && mtu <= 9216)) || { echo "hosts.sh up: --mtu 1280..9216" >&2; exit 2; }
	[[ $subnets == 1 || $subnets == 2 ]] || { echo "hosts.sh up: --subnets 1|2" >&2; exit 2; }
	# No choice made: this tree's build when there is one, else what is
	# installed.
	if [[ -z $build && -z $unetctl && -z $provdir && -x $ROOT/build/unetctl ]]; then
		build=$ROOT/build
	fi
	if [[ -n $build ]]; then
		[[ $build = /* ]] || build="$PWD/$build"
		[[ -n $unetctl ]] || unetctl=$build/unetctl
		[[ -n $provdir ]] || provdir=$build
	fi
	[[ -n $unetctl ]] || unetctl=$(command -v unetctl) ||
		die "no unetctl on PATH: install it, or name it with --unetctl PATH (or --build DIR)"
	[[ $unetctl = /* ]] || unetctl="$PWD/$unetctl"
	[[ -n $provdir ]] || provdir=$(installed_provider_dir)
	[[ -z $provdir || $provdir = /* ]] || provdir="$PWD/$provdir"
	[[ $(id -u) -eq 0 ]] || die "needs root (namespaces, bpffs, XDP)"
	[[ -x $unetctl ]] || die "missing $unetctl: run 'make' first (or name it with --unetctl PATH)"
	grep -qw bpf /proc/filesystems || die "this kernel has no bpffs"

	local st="$STATE_ROOT/$name"
	mkdir -p "$STATE_ROOT" && mkdir "$st" 2>/dev/null || die "run $name exists ($st): hosts.sh down $name"
	: >"$st/resources"
	# Whatever fails from here on, undo what was made.
	if ! setup_hosts "$name" "$n" "$mode" "$unetctl" "$provdir" "$mtu" "$subnets"; then
		do_down "$name"
		exit 1
	fi
	echo "$name"
}

setup_hosts() {
	local name=$1 n=$2 mode=$3 unetctl=$4 provdir=$5 mtu=$6 subnets=$7 st="$STATE_ROOT/$1"
	local brns k ns dir out br ip subnet=$SUBNET
	brns=$(br_ns "$name")
	ip netns add "$brns" || { echo "hosts.sh: ip netns add $brns failed" >&2; return 1; }
	record "$name" ns "$brns"
	ip -n "$brns" link set lo up &&
		ip -n "$brns" link add br0 mtu "$mtu" type bridge &&
		ip -n "$brns" addr add "$BR_IP/24" dev br0 &&
		ip -n "$brns" link set br0 up || { echo "hosts.sh: bridge setup failed" >&2; return 1; }
	ip netns exec "$brns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		>/dev/null 2>&1 || true
	# No learning delay or STP: the bridge forwards from the first frame.
	ip -n "$brns" link set br0 type bridge stp_state 0 forward_delay 0 2>/dev/null || true
	if ((subnets == 2)); then
		subnet=$SUBNETS2
		{ ip -n "$brns" link add br1 mtu "$mtu" type bridge &&
			ip -n "$brns" addr add "$NET_PREFIX2.254/24" dev br1 &&
			ip -n "$brns" link set br1 type bridge stp_state 0 forward_delay 0 &&
			ip -n "$brns" link set br1 up &&
			ip netns exec "$brns" sysctl -qw net.ipv4.ip_forward=1 >/dev/null; } ||
			{ echo "hosts.sh: the second subnet's bridge and routing failed" >&2; return 1; }
	fi

	{
		echo "# hosts.sh run $name: N=$n mode=$mode"
		echo "UNET_HOSTS_NAME=$name"
		echo "UNET_HOSTS_N=$n"
		echo "UNET_HOSTS_UNETCTL=$unetctl"
		echo "UNET_HOSTS_PROVDIR=$provdir"
		echo "UNET_HOSTS_MODE=$mode"
		echo "UNET_HOSTS_MTU=$mtu"
		echo "UNET_HOSTS_SUBNET=$subnet"
		echo "UNET_HOSTS_SUBNETS=$subnets"
	} >"$st/hosts.env"
	: >"$st/hostfile"
	for ((k = 1; k <= n; k++)); do
		ns=$(host_ns "$name" "$k")
		dir="$st/h$k/bpf"
		ip netns add "$ns" || { echo "hosts.sh: ip netns add $ns failed" >&2; return 1; }
		record "$name" ns "$ns"
		ip -n "$ns" link set lo up || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
		# Made inside the host, its peer moved to the bridge: no name
		# ever exists in the root namespace.
		br=br0 ip=$NET_PREFIX.$k
		((subnets == 2 && k % 2 == 0)) && br=br1 ip=$NET_PREFIX2.$k
		ip -n "$ns" link add eth0 mtu "$mtu" type veth peer name "p$k" mtu "$mtu" netns "$brns" &&
			ip -n "$ns" addr add "$ip/24" dev eth0 &&
			ip -n "$ns" link set eth0 up &&
			ip -n "$brns" link set "p$k" master "$br" &&
			ip -n "$brns" link set "p$k" up || { echo "hosts.sh: veth of $ns failed" >&2; return 1; }
		if ((subnets == 2)); then
			if [[ $br == br0 ]]; then
				ip -n "$ns" route add "$NET_PREFIX2.0/24" via "$BR_IP"
			else
				ip -n "$ns" route add "$SUBNET" via "$NET_PREFIX2.254"
			fi || { echo "hosts.sh: the route of $ns to the other subnet failed" >&2; return 1; }
		fi
		mkdir -p "$dir" || return 1
		mount -t bpf -o mode=0700 bpf "$dir" || { echo "hosts.sh: mount bpffs on $dir failed" >&2; return 1; }
		record "$name" bpffs "$dir"
		if ! out=$(ip netns exec "$ns" env UNET_PIN_ROOT="$dir" "$unetctl" attach eth0 --mode "$mode" 2>&1); then
			echo "hosts.sh: unetctl attach eth0 --mode $mode in $ns failed: $out" >&2
			return 1
		fi
		echo "$ns slots=1" >>"$st/hostfile"
		printf 'UNET_PIN_ROOT=%s\nFI_UNET_IFACE=eth0\n' "$dir" >"$st/h$k.env"
	done
	write_agent "$name"
	# Every host reaches every other through the bridge before anything
	# runs (ARP resolved, ports forwarding).
	for ((k = 1; k <= n; k++)); do
		ip=$NET_PREFIX.$k
		((subnets == 2 && k % 2 == 0)) && ip=$NET_PREFIX2.$k
		ip netns exec "$brns" ping -c 1 -W 2 "$ip" >/dev/null 2>&1 ||
			{ echo "hosts.sh: host $k does not answer on $ip" >&2; return 1; }
	done
	return 0
}

# write_agent NAME: the rsh agent.  Open MPI calls it as `agent HOST
# COMMAND...` (as it would call ssh), and, as ssh does, the command words
# are joined and run by a shell on the host: here a shell inside HOST's
# namespace with its own UTS namespace (its own host name, so Open MPI
# sees N distinct nodes) and the host's environment (its pin root and
# interface), which orted and the ranks inherit.
write_agent() {
	local name=$1 st="$STATE_ROOT/$1"
	cat >"$st/agent" <<EOF
#!/bin/sh
# rsh agent of hosts.sh run $name (generated; removed by hosts.sh down $name)
h=\$1; shift
k=\${h#${name}h}
[ -f "$st/h\$k.env" ] || { echo "agent: unknown host \$h" >&2; exit 255; }
set -a; . "$st/h\$k.env"; set +a
exec ip netns exec "\$h" unshare --uts sh -c "hostname \$h && \$*"
EOF
	chmod 755 "$st/agent"
}

# ---- mpirun ------------------------------------------------------------

# load NAME: read the run's state.
load() {
	local st="$STATE_ROOT/$1"
	[[ -f $st/hosts.env ]] || die "no run $1 (hosts.sh up first)"
	# shellcheck disable=SC1091
	source "$st/hosts.env"
}

# net_args NET PROVIDER-DIR: the mpirun arguments selecting transport NET.
net_args() {
	case $1 in
	unet)
		[[ -f $2/libunet-fi.so ]] ||
			die "no libunet-fi.so in '$2': build it (make), install it (make install), or name its directory with up's --provider-dir DIR"
		NET_ARGS=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include unet
			-x FI_PROVIDER_PATH="$2" -x FI_PROVIDER=unet)
		;;
	ofi-tcp)
		NET_ARGS=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp
			-x FI_PROVIDER=tcp -x FI_TCP_IFACE=eth0)
		;;
	ofi-udp)
		NET_ARGS=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include udp
			-x FI_PROVIDER=udp -x FI_UDP_IFACE=eth0)
		;;
	tcp)
		# shellcheck disable=SC2054 # "tcp,self" is one MCA value
		NET_ARGS=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$UNET_HOSTS_SUBNET")
		;;
	*) echo "hosts.sh: --net unet|ofi-tcp|ofi-udp|tcp, not '$1'" >&2; exit 2 ;;
	esac
}

# kill_all NAME: SIGKILL every process inside the run's namespaces (all
# were started by this run: the namespaces are its own).
kill_all() {
	local kind ns pids
	while read -r kind ns; do
		[[ $kind == ns ]] || continue
		mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
		((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null
	done <"$STATE_ROOT/$1/resources"
	return 0
}

do_mpirun() {
	local name=${1:-} net=unet to=120 np="" extra=()
	[[ -n $name ]] || { echo "hosts.sh mpirun NAME ... -- PROG" >&2; exit 2; }
	shift
	while (($#)); do
		case $1 in
		--net) net=${2:-}; shift 2 || exit 2 ;;
		--timeout) to=${2:-}; shift 2 || exit 2 ;;
		--np) np=${2:-}; shift 2 || exit 2 ;;
		--) shift; break ;;
		*) extra+=("$1"); shift ;;
		esac
	done
	(($#)) || { echo "hosts.sh mpirun: no program (after --)" >&2; exit 2; }
	[[ $to =~ ^[0-9]+$ ]] || { echo "hosts.sh mpirun: --timeout seconds" >&2; exit 2; }
	load "$name"
	np=${np:-$UNET_HOSTS_N}
	net_args "$net" "$UNET_HOSTS_PROVDIR"
	command -v mpirun >/dev/null || die "no mpirun (apt-get install openmpi-bin)"
	local st="$STATE_ROOT/$name" rc t0=$SECONDS
	# mpirun runs in the bridge's namespace: its out-of-band TCP reaches
	# the orteds over the bridge, and the root namespace is untouched.
	# Tree spawn off: only mpirun calls the agent.
	# In the background, waited for: a TERM or INT to this script ends
	# the job at once (every process in the run's namespaces is killed,
	# mpirun included; mpirun itself may take long to end a job on TERM)
	# instead of waiting for the job to end by itself.
	timeout -k 5 "$to" ip netns exec "$(br_ns "$name")" env \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		OMPI_MCA_plm_rsh_agent="$st/agent" OMPI_MCA_plm_rsh_no_tree_spawn=1 \
		OMPI_MCA_oob_tcp_if_include="$UNET_HOSTS_SUBNET" OMPI_MCA_btl_tcp_if_include="$UNET_HOSTS_SUBNET" \
		OMPI_MCA_orte_keep_fqdn_hostnames=1 OMPI_MCA_mpi_yield_when_idle=1 \
		mpirun --hostfile "$st/hostfile" -np "$np" --bind-to none "${NET_ARGS[@]}" "${extra[@]}" "$@" &
	local tpid=$! sig=0
	# shellcheck disable=SC2064 # the run's name, now
	trap "sig=143; kill_all '$name'" TERM
	# shellcheck disable=SC2064
	trap "sig=130; kill_all '$name'" INT
	while :; do
		wait "$tpid"
		rc=$?
		kill -0 "$tpid" 2>/dev/null || break
	done
	trap - TERM INT
	((sig)) && return "$sig"
	# timeout's own statuses, and only when the time is really up (a job
	# whose rank died of SIGKILL may exit 137 by itself).
	if ((rc == 124 || rc == 137)) && ((SECONDS - t0 >= to)); then
		echo "hosts.sh: job over $net timed out after ${to}s; killing what is left" >&2
		kill_all "$name"
		rc=124
	fi
	return $rc
}

# ---- fault, down, list, run ---------------------------------------------

do_fault() {
	local name=${1:-} ppm=${2:-} k out
	[[ -n $name && $ppm =~ ^[0-9]+$ ]] || { echo "hosts.sh fault NAME PPM" >&2; exit 2; }
	load "$name"
	for ((k = 1; k <= UNET_HOSTS_N; k++)); do
		out=$(ip netns exec "$(host_ns "$name" "$k")" env UNET_PIN_ROOT="$STATE_ROOT/$name/h$k/bpf" \
			"$UNET_HOSTS_UNETCTL" fault eth0 --drop-ppm "$ppm" 2>&1) ||
			die "unetctl fault on host $k failed: $out"
	done
}

do_exec() {
	local name=${1:-} k=${2:-}
	[[ -n $name && $k =~ ^[0-9]+$ && ${3:-} == -- ]] || { echo "hosts.sh exec NAME K -- CMD" >&2; exit 2; }
	shift 3
	load "$name"
	((k >= 1 && k <= UNET_HOSTS_N)) || die "no host $k in run $name"
	ip netns exec "$(host_ns "$name" "$k")" env UNET_PIN_ROOT="$STATE_ROOT/$name/h$k/bpf" FI_UNET_IFACE=eth0 "$@"
}

do_down() {
	local name=${1:-} st kind val
	[[ -n $name ]] || { echo "hosts.sh down NAME" >&2; exit 2; }
	st="$STATE_ROOT/$name"
	[[ -f $st/resources ]] || return 0
	kill_all "$name"
	# Namespaces first (their processes are gone), then the mounts.
	while read -r kind val; do
		[[ $kind == ns ]] && ip netns del "$val" 2>/dev/null
	done <"$st/resources"
	while read -r kind val; do
		if [[ $kind == bpffs ]]; then
			umount "$val" 2>/dev/null || umount -l "$val" 2>/dev/null
		fi
	done <"$st/resources"
	rm -rf --one-file-system "$st"
	return 0
}

do_list() {
	local d
	for d in "$STATE_ROOT"/*/hosts.env; do
		# shellcheck disable=SC1090
		[[ -f $d ]] && (source "$d" && echo "$UNET_HOSTS_NAME N=$UNET_HOSTS_N mode=$UNET_HOSTS_MODE")
	done
	return 0
}

do_run() {
	local n="" up=() mp=()
	RUN_NAME="uh$$"
	while (($#)); do
		case $1 in
		--mode | --build | --unetctl | --provider-dir | --subnets) up+=("$1" "${2:-}"); shift 2 || exit 2 ;;
		--name) RUN_NAME=${2:-}; shift 2 || exit 2 ;;
		--) break ;;
		[0-9]*) [[ -z $n ]] && { n=$1; shift; } || { mp+=("$1"); shift; } ;;
		*) mp+=("$1"); shift ;;
		esac
	done
	[[ -n $n ]] || { echo "hosts.sh run N ... -- PROG" >&2; exit 2; }
	trap 'do_down "$RUN_NAME"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	do_up "$n" --name "$RUN_NAME" "${up[@]}" >/dev/null || exit 1
	do_mpirun "$RUN_NAME" "${mp[@]}" "$@"
}

cmd=${1:-}
shift || true
case $cmd in
up) do_up "$@" ;;
mpirun) do_mpirun "$@" ;;
fault) do_fault "$@" ;;
exec) do_exec "$@" ;;
down) do_down "$@" ;;
list) do_list ;;
run) do_run "$@" ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
