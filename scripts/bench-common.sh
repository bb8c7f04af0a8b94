# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench-common.sh - what the benchmark scripts (bench.sh,
# bench-parallel.sh) share: what becomes of a run's logs, and how a plot
# is drawn.  Sourced; it only defines functions.

# bench_logs_done NAME DIR: the end of a run's log directory DIR: removed,
# or kept with BENCH_KEEP_LOGS=1 (NAME says where on stderr).
bench_logs_done() {
	if [[ ${BENCH_KEEP_LOGS:-0} == 1 ]]; then
		echo "$1: logs kept in $2" >&2
	else
		rm -rf "$2"
	fi
}

# bench_plot PNG LOG [SIZE [FONT]] <SCRIPT: gnuplot draws PNG (pngcairo,
# SIZE 1000,600 and font size 11 unless given) from the gnuplot SCRIPT
# on stdin; its messages are added to LOG.  Returns gnuplot's status.
bench_plot() {
	{
		printf 'set terminal pngcairo size %s font ",%s"\nset output "%s"\n' \
			"${3:-1000,600}" "${4:-11}" "$1"
		cat
	} | gnuplot >>"$2" 2>&1
}
