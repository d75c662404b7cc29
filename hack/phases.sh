#!/usr/bin/env bash
# Runs make targets one after another, as `make verify` and `make test` do,
# stops at the first that fails, and prints how long each took.
#
# With PHASE_LOG set to a file (.ci/run sets it), each phase appends a line
# "NAME SECONDS" to it, so that the caller can print every phase of a run at
# the end; hack/cluster.sh and hack/e2e.sh append their own steps there too.
# A target that already passed earlier in the same log is not run again:
# .ci/run runs `make verify` and then `make test` on the same tree, and both
# include test-chart.
#
# Usage: hack/phases.sh TARGET...
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "${ROOT}"

times=()
for target in "$@"; do
	if [[ -n "${PHASE_LOG:-}" && -f "${PHASE_LOG}" ]] && grep -qx "${target} [0-9]*" "${PHASE_LOG}"; then
		echo "phases: ${target} passed earlier in this run; not run again" >&2
		times+=("${target} (passed earlier in this run)")
		continue
	fi
	start=$(date +%s)
	make --no-print-directory "${target}"
	elapsed=$(($(date +%s) - start))
	times+=("${target} ${elapsed}s")
	if [[ -n "${PHASE_LOG:-}" ]]; then echo "${target} ${elapsed}" >>"${PHASE_LOG}"; fi
done
printf 'phases: %s\n' "${times[@]}" >&2
