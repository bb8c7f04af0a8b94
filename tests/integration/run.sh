#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh - the unet-xdp namespace test suite.
#
#   tests/integration/run.sh [--build DIR] [--mode native|skb|both] [--list] [NAME...]
#
# Every test runs in its own pair of network namespaces joined by a veth
# (scripts/netns.sh), with its own bpffs pin root, in its own process
# session with a time limit; whatever happens, the namespaces, mounts and
# processes it made are removed.  Tests that exercise the data path run
# once per XDP mode (NAME/native, NAME/skb).  NAME selects a test in every
# selected mode ("integrity") or one mode ("integrity/skb").
#
# Output: one "PASS name", "FAIL name: reason" or "SKIP name: reason"
# line per test (with the log's tail on failure) and a last line
# "N passed, N failed, N skipped".  Exit 1 if any failed, 2 on usage
# errors.  A test that lacks a kernel feature is skipped, never passed.
#
# Environment: UNET_FLOOD_RATE (flood100k messages/s, default 50000; 25000 under UNET_SANITIZED=1),
# UNET_TEST_KEEP_LOGS=1 (keep the per-test logs, path printed at the end).
#
# The tests live by area in t_*.sh beside this file (t_core.sh: the data
# path; t_cli.sh: unetctl, API errors, bench; t_uam.sh: Active Messages;
# t_udp.sh: UDP; t_pkg.sh: versions, man pages, completion, Debian
# packages; t_docs.sh: the docs' examples and facts against an install),
# the helpers and the runner in lib.sh.  Adding a test:
# one function t_NAME in an area file and one line in that file's TESTS
# table; a new area file t_AREA.sh is picked up by itself (--list shows
# t_core.sh's tests first, then the other areas in file name order).

set -u
# The tests' Python modules (scapy) are Debian's packages, installed by
# scripts/install-deps.sh for Debian's python3: that one first, ahead of
# any other on the PATH (pyenv's, a virtualenv's), which lacks them.
export PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH
# What we create for the run (namespaces' /run/netns, pin roots, logs
# other users' programs write beside) gets ordinary modes, whatever the
# caller's umask (077 is common for root).
umask 022

SELF=$(readlink -f "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../../scripts/stage.sh
source "$ROOT/scripts/stage.sh"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks;
# each area file appends its own tests.
# The data path first, then the rest in name order.
TESTS=()
_areas=("$HERE/t_core.sh")
for _area in "$HERE"/t_*.sh; do
	[[ $_area == "${_areas[0]}" ]] || _areas+=("$_area")
done
for _area in "${_areas[@]}"; do
	# A file bash cannot parse is sourced in part, and the tests it still
	# defines could pass: refuse to run any.  (A test file's last
	# command is a definition, so anything but 0 is a parse error.)
	# shellcheck disable=SC1090
	source "$_area" || {
		echo "run.sh: $_area does not parse: no test runs" >&2
		exit 2
	}
done
unset _area _areas

main "$@"
