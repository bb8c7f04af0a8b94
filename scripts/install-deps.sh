#!/usr/bin/env bash
# Install the Debian packages unet-xdp needs to build, test and demo, if any
# is missing.  Needs root (apt-get); does nothing when all are present.
set -euo pipefail
pkgs=(make gcc clang llvm pkg-config libbpf-dev libxdp-dev xdp-tools bpftool
      libelf-dev zlib1g-dev libcmocka-dev iproute2 iputils-ping ethtool
      util-linux procps jq sockperf gnuplot-nox
      # TCP over U-Net: lwIP (the TCP engine), and the tests' kernel peers
      liblwip-dev iperf3 python3 python3-scapy
      # unet-run's tests: unmodified programs under it, and their kernel
      # peers (redis-server's and nginx's services are kept from starting:
      # see below)
      curl redis-server redis-tools nginx wrk strace
      # the libfabric provider, its tests (fi_info) and Open MPI over it;
      # the MPI programs (examples/parallel); column for bench-parallel
      libfabric-dev libfabric-bin libopenmpi-dev openmpi-bin bsdextrautils
      # make deb and its tests: Debian's packaging tools, lintian, the man
      # pages' renderer, bash completion
      build-essential dpkg-dev debhelper fakeroot lintian man-db groff-base
      bash-completion)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "install-deps: missing packages: ${missing[*]} (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Packages that start a service on install (redis-server, nginx) must not leave
# one running: a policy-rc.d that refuses every start, for this install
# only, where the administrator has none of their own.
norc=""
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	norc=/usr/sbin/policy-rc.d
fi
trap 'if [[ -n $norc ]]; then rm -f "$norc"; fi' EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}"
