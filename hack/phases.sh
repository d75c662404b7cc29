#!/usr/bin/env bash
# Runs make targets one after another, as `make verify` and `make test` do,
# stops at the first that fails, and prints how long each took.
#
# The targets after --beside run one after another beside those before it,
# under `nice -n 19`. `make test` runs its builds and computation (the unit
# tests, the image, the fuzzers' builds) beside test-e2e: the e2e suite
# spends most of its time waiting for the cluster and the controller, and
# leaves cores idle that they fill. Under nice they take only what the
# cluster does not, so its latencies, which the e2e tests time, stay those
# of a run alone. Their output goes to a log, named at the start and
# printed once the targets before --beside have ended. The run fails if
# either side fails.
#
# With PHASE_LOG set to a file (.ci/run sets it), each phase appends a line
# "NAME SECONDS" to it, so that the caller can print every phase of a run at
# the end; hack/cluster.sh and hack/e2e.sh append their own steps there too.
# A target that already passed earlier in the same log is not run again:
# .ci/run runs `make verify` beside `make test` on the same tree, and both
# include test-chart.
#
# Usage: hack/phases.sh TARGET... [--beside TARGET...]
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "${ROOT}"

# run TARGET...: the targets one after another, as described above.
run() {
	local target start elapsed times=()
	for target in "$@"; do
		if [[ -n "${PHASE_LOG:-}" && -f "${PHASE_LOG}" ]] && grep -qx "${target} [0-9]*" "${PHASE_LOG}"; then
			echo "phases: ${target} passed earlier in this run; not run again" >&2
			times+=("${target} (passed earlier in this run)")
			continue
		fi
		start=$(date +%s)
		if ! make --no-print-directory "${target}"; then
			printf 'phases: %s\n' "${times[@]}" "${target} failed after $(($(date +%s) - start))s" >&2
			return 1
		fi
		elapsed=$(($(date +%s) - start))
		times+=("${target} ${elapsed}s")
		if [[ -n "${PHASE_LOG:-}" ]]; then echo "${target} ${elapsed}" >>"${PHASE_LOG}"; fi
	done
	printf 'phases: %s\n' "${times[@]}" >&2
}

foreground=() beside=()
while (($# > 0)) && [[ "$1" != --beside ]]; do
	foreground+=("$1")
	shift
done
if (($# == 0)); then
	run "${foreground[@]}"
	exit
fi
shift
beside=("$@")

log=$(mktemp -t deployobject-phases-XXXXXX.log)
echo "phases: ${beside[*]} run beside ${foreground[*]}, under nice; their output is in ${log} until then" >&2
# In a session of its own, so that an interrupt can stop the whole group.
setsid nice -n 19 "${BASH_SOURCE[0]}" "${beside[@]}" >"${log}" 2>&1 &
pid=$!
trap 'kill -TERM -- "-${pid}" 2>/dev/null; rm -f "${log}"; exit 130' INT TERM

status=0
run "${foreground[@]}" || status=$?
beside_status=0
wait "${pid}" || beside_status=$?
echo "== the phases beside ${foreground[*]}:" >&2
cat "${log}" >&2
rm -f "${log}"
if ((beside_status != 0)); then
	echo "phases: FAILED beside ${foreground[*]}: ${beside[*]}" >&2
	status=${beside_status}
fi
exit "${status}"
