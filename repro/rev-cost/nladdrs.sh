#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# nladdrs.sh BUILD - unet_nl_addrs against dumps a hostile user shapes in a
# user+network namespace of its own (README.md here).  As root from the
# source tree after make: builds nladdrs.c against BUILD/libunet-xdp.a,
# then runs it as nobody under unshare -Urn with a veth uq0/uq1.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
BIN=$(mktemp /tmp/rc-nladdrs.XXXXXX)
trap 'rm -f "$BIN"' EXIT
cc -std=gnu11 -D_GNU_SOURCE -I"$BUILD" -I"$ROOT/include" -I"$ROOT/lib" -I"$ROOT/bpf" -O1 -g \
	-o "$BIN" "$ROOT/repro/rev-cost/nladdrs.c" "$BUILD/libunet-xdp.a" \
	-lxdp -lbpf -lelf -lz -llwip -lpthread -lm || exit 1
chmod 755 "$BIN"
# shellcheck disable=SC2016
timeout 300 setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn bash -c '
N=$1
set -u
ip link add uq0 type veth peer name uq1 && ip link set uq0 up && ip link set uq1 up
sysctl -qw net.ipv6.conf.uq0.accept_dad=0 net.ipv6.conf.uq1.accept_dad=0
echo "== A. IPv4 point-to-point: local 10.9.0.1, peer 10.9.0.99"
ip addr add 10.9.0.1 peer 10.9.0.99/32 dev uq0
$N v4 uq0; $N has uq0 10.9.0.99; $N has uq0 10.9.0.1
echo "== B. IPv6 with a peer: local fd01::1, peer fd01::99"
ip -6 addr add fd01::1 peer fd01::99/128 dev uq0 nodad
$N list 6 uq0 | grep -v "^fe80"
echo "== C. an IPv4 address on uq1 (label uq1:x) is not uq0s"
ip addr add 10.9.9.9/24 dev uq1 label uq1:x
$N has uq0 10.9.9.9
echo "== D. 300 IPv4 addresses on uq0: the 300th (10.10.1.43) and the first (10.9.0.1)"
for i in $(seq 0 299); do echo "address add 10.10.$((i / 256)).$((i % 256))/32 dev uq0"; done | ip -batch -
$N has uq0 10.10.1.43; $N has uq0 10.9.0.1; $N v4 uq0
echo "== E. IPv6: fd77::2/64 (the kernel source for fd77::ffff:1), then 300 /128s in fd78::, one deprecated fd77::dead first"
ip -6 addr flush dev uq0 scope global
ip -6 addr add fd77::dead/64 dev uq0 nodad preferred_lft 0
ip -6 addr add fd77::2/64 dev uq0 nodad
for i in $(seq 0 299); do echo "address add fd78::$i/128 dev uq0 nodad"; done | ip -batch -
echo "kernel: $(ip -6 route get fd77::ffff:1 oif uq0 | grep -o "src [^ ]*")"
$N v6 uq0 fd77::ffff:1
$N list 6 uq0 | head -3
echo "== F. 20000 IPv6 addresses on uq1, 300 on uq0: dumps of uq0 while uq1 changes"
for i in $(seq 0 19999); do printf "address add fd79::%x:%x/128 dev uq1 nodad\n" $((i / 65536)) $((i % 65536)); done | ip -batch -
$N loop 6 uq0 2000 uq1
( for r in 1 2 3; do
	for i in $(seq 0 499); do echo "address del fd78::$i/128 dev uq0"; echo "address add fd7a::$r:$i/128 dev uq1 nodad"; done | ip -batch - 2>/dev/null
	for i in $(seq 0 499); do echo "address add fd78::$i/128 dev uq0 nodad"; done | ip -batch - 2>/dev/null
  done ) &
$N loop 6 uq0 3000 uq1
wait
echo "== G. 20000 IPv4 addresses on uq1: has uq0 10.9.0.1 (cost of one dump)"
for i in $(seq 0 19999); do echo "address add 10.20.$((i / 250)).$((i % 250 + 1))/32 dev uq1"; done | ip -batch -
$N loop 4 uq0 2000 uq1
' nladdrs "$BIN" 2>&1
