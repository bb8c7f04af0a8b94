# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# stage.sh - a copy of a build's programs that every user can run, for
# demos, tests and benchmarks that run some programs as another user
# (nobody, 65533, ...).  Source it; do not run it.
#
#   source scripts/stage.sh
#   unet_stage build || exit 1     # sets UNET_STAGE
#   setpriv --reuid=65534 ... "$UNET_STAGE/examples/pingpong" ...
#   unet_stage_remove              # or let the caller's EXIT trap do it
#
# Why: the clone may sit where another user cannot reach it (root's home
# is 0700, and so is every `mktemp -d` directory), so a program run as
# nobody from the build tree fails with "Permission denied" before it
# starts.  The stage is a fresh directory under /tmp made for this run:
# owned by root and 0755, with root-owned copies of the build's programs
# and libraries (not its objects), readable and runnable by all and
# writable by none but root, whatever the umask and the clone's owner
# were.  Nobody can reach it, nobody can change what root later runs
# from it.  Programs link the library statically (or find their shared
# libraries beside them, as the libfabric provider), so the copy runs
# wherever it is.

UNET_STAGE=""

# unet_stage BUILD_DIR - copy BUILD_DIR's programs to a new stage; sets
# UNET_STAGE (absolute).  Returns 1 with a one-line error on failure.
unet_stage() {
	local src=$1 dir
	[[ -d $src ]] || { echo "stage.sh: no build directory '$src'" >&2; return 1; }
	dir=$(mktemp -d /tmp/unet-stage.XXXXXX) || { echo "stage.sh: mktemp failed" >&2; return 1; }
	# Objects, dependency files, archives and built packages stay behind:
	# nothing run as another user needs them.
	if ! tar -C "$src" --exclude='*.o' --exclude='*.d' --exclude='*.a' --exclude=./deb \
		-cf - . | tar -C "$dir" --no-same-owner --no-same-permissions -xf -; then
		rm -rf "$dir"
		echo "stage.sh: copying $src to $dir failed" >&2
		return 1
	fi
	# --no-same-owner gives root's files (the caller is root); the modes
	# are set here, not inherited from the build's umask.
	if ! chmod -R u+rwX,go=rX "$dir"; then
		rm -rf "$dir"
		echo "stage.sh: chmod of $dir failed" >&2
		return 1
	fi
	# Whose stage it is (a test that checks its own runs left none
	# behind tells them from other runs' on the machine).
	(cd "$src" && pwd) >"$dir/.source" 2>/dev/null && chmod 0644 "$dir/.source"
	UNET_STAGE=$dir
}

# unet_stage_remove - remove the stage, if one was made.  Idempotent.
unet_stage_remove() {
	[[ -n $UNET_STAGE && $UNET_STAGE == /tmp/unet-stage.* ]] && rm -rf "$UNET_STAGE"
	UNET_STAGE=""
	return 0
}
