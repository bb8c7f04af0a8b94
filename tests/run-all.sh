#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run-all.sh BUILD_DIR [unit|integration|all] - every unet-xdp test.
#
# unit: each BUILD_DIR/tests/test_* cmocka binary, except those that need
# an interface (NEEDS_IFACE below: the integration suite runs them inside
# its namespaces).  Results are counted per test case from cmocka's
# summary; a binary that dies without one (a crash, a sanitizer report)
# counts as one failure.
# integration: tests/integration/run.sh --build BUILD_DIR --mode
# alternate-skb, and with UNET_SANITIZED=1 --mode alternate: each XDP
# data-path test runs once per pass, skb and native in turn down the
# table, the other way round in the sanitizers' pass, so make check runs
# every such test in both modes (one of them under the sanitizers) and
# stays inside its time.  The sanitizers watch our code, which is the
# same in both modes (the mode changes the kernel's path to the socket,
# not the library's).  UNET_CHECK_MODES=both: every mode in the plain
# pass (make check-modes).
#
# Prints a final line "N passed, N failed, N skipped" and exits non-zero
# if anything failed.  With UNET_SANITIZED=1 the sanitizer runtimes are
# set to stop at the first error and to check for leaks.

set -u

BUILD=${1:-}
WHAT=${2:-all}
if [[ -z $BUILD || ! -d $BUILD ]]; then
	echo "usage: $0 BUILD_DIR [unit|integration|all]" >&2
	exit 2
fi
case $WHAT in unit | integration | all) ;; *)
	echo "usage: $0 BUILD_DIR [unit|integration|all]" >&2
	exit 2
	;;
esac
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)

# Unit binaries that need a live interface (run by the integration suite).
NEEDS_IFACE=(test_api_errors test_datapath test_uam test_core_hardening test_wait test_tcp_fuzz)

if [[ ${UNET_SANITIZED:-0} == 1 ]]; then
	export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:exitcode=99${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
	export LSAN_OPTIONS="exitcode=97${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fi

passed=0 failed=0 skipped=0

# num LINE_PREFIX FILE: the count cmocka printed after LINE_PREFIX, or 0.
num() {
	local v
	v=$(grep -F -- "$1" "$2" | sed -n 's/.*\] *\([0-9][0-9]*\) test.*/\1/p' | tail -1)
	echo "${v:-0}"
}

run_unit() {
	local bin name dir rc p f s skipped_bin names=() width
	shopt -s nullglob
	local bins=("$BUILD"/tests/test_*)
	shopt -u nullglob
	dir=$(mktemp -d /tmp/unet-unit.XXXXXX) || exit 1
	# As many binaries at once as there are CPUs: each is a process of
	# its own (temporary files from mkdtemp, network namespaces of its
	# own), most are bound by one CPU, and a few wait on the kernel.
	# Their results are reported in name order, as they were run.
	width=$(nproc)
	for bin in "${bins[@]}"; do
		[[ -x $bin && -f $bin ]] || continue
		name=$(basename "$bin")
		names+=("$name")
		skipped_bin=0
		for s in "${NEEDS_IFACE[@]}"; do
			[[ $name == "$s" ]] && skipped_bin=1
		done
		((skipped_bin)) && continue
		while (($(jobs -rp | wc -l) >= width)); do
			wait -n
		done
		# A unit test binary must not hang the suite.
		{
			timeout -k 5 120 "$bin" >"$dir/$name.log" 2>&1
			echo $? >"$dir/$name.rc"
		} &
	done
	wait
	for name in "${names[@]}"; do
		if [[ ! -e $dir/$name.rc ]]; then
			echo "unit $name: needs an interface, run by the integration suite"
			continue
		fi
		rc=$(cat "$dir/$name.rc")
		p=$(num '[  PASSED  ]' "$dir/$name.log")
		f=$(num '[  FAILED  ]' "$dir/$name.log")
		s=$(num '[  SKIPPED ]' "$dir/$name.log")
		if ((rc != 0 && f == 0)); then
			f=1 # died: crash, sanitizer, timeout
		fi
		if ((rc == 0 && f > 0)); then
			f=0 # cannot happen with cmocka; trust the exit status
		fi
		if ((rc != 0 || f > 0)); then
			echo "FAIL unit $name (exit $rc): $p passed, $f failed, $s skipped"
			# The failed tests' own lines first (cmocka's message and
			# where), which a long binary's last lines may not hold.
			awk '/^\[==========\]/ { exit } /^\[ RUN      \]/ { n = 0; delete b } { b[n++] = $0 }
			     /^\[  FAILED  \] [a-z_0-9]+$/ && !/listed below/ { for (i = 0; i < n; i++) print b[i]; n = 0 }' \
				"$dir/$name.log" | sed 's/^/    /' | head -n 80
			echo "    ... the log's last lines:"
			sed 's/^/    /' "$dir/$name.log" | tail -n 30
		else
			echo "PASS unit $name: $p passed, $s skipped"
		fi
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + s))
	done
	rm -rf "$dir"
	if ((${#bins[@]} == 0)); then
		echo "FAIL unit: no test binaries in $BUILD/tests"
		failed=$((failed + 1))
	fi
}

run_integration() {
	local log rc line
	log=$(mktemp /tmp/unet-integ.XXXXXX) || exit 1
	local mode=alternate-skb
	[[ ${UNET_CHECK_MODES:-} == both ]] && mode=both
	[[ ${UNET_SANITIZED:-0} == 1 ]] && mode=alternate
	bash "$ROOT/tests/integration/run.sh" --build "$BUILD" --mode "$mode" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(tail -n 1 "$log")
	rm -f "$log"
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		skipped=$((skipped + BASH_REMATCH[3]))
		if ((rc != 0 && BASH_REMATCH[2] == 0)); then
			echo "FAIL integration: run.sh exited $rc"
			failed=$((failed + 1))
		fi
	else
		echo "FAIL integration: run.sh (exit $rc) printed no summary"
		failed=$((failed + 1))
	fi
}

[[ $WHAT == unit || $WHAT == all ]] && run_unit
[[ $WHAT == integration || $WHAT == all ]] && run_integration

echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
