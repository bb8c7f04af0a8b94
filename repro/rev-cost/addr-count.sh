#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# addr-count.sh [N] - how many addresses repro/unetd-addr-scan/run.sh's
# holder really puts on its veth for N (default 20000): it writes the
# groups in decimal ("fd78::0:10000"), which ip rejects from 10000 on,
# and ip -batch stops at the first error, unchecked.  Run as root.
set -u
n=${1:-20000}
# shellcheck disable=SC2016
timeout 120 setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sh -c '
ip link add uq0 type veth peer name uq1 && ip link set uq0 up && sysctl -qw net.ipv6.conf.uq0.accept_dad=0
i=0; while [ $i -lt '"$n"' ]; do echo "address add fd78::$((i / 65536)):$((i % 65536))/128 dev uq0 nodad"; i=$((i + 1)); done >/tmp/rc-b.$$
ip -batch /tmp/rc-b.$$; echo "ip -batch rc=$?"; rm -f /tmp/rc-b.$$
echo "asked for '"$n"', on uq0: $(ip -6 addr show dev uq0 | grep -c "inet6 fd78")"' 2>&1 | tail -3
