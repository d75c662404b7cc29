#!/usr/bin/env bash
# Mutation testing with gremlins: each package given (by default the four
# whose decisions are pure functions) is mutated one line at a time and its
# own tests are run against each mutant, one package after another. At the
# end it prints, per package, the mutants killed, lived, not covered and
# timed out, the test efficacy (killed / (killed + lived)), the mutant
# coverage ((killed + lived) / (killed + lived + not covered)) and the wall
# time, then every mutant that lived or timed out.
# docs/development.md#mutation-testing says what to do with them.
#
#   hack/mutations.sh [pkg/DIR ...]
#
# MUTATION_WORKERS (default 1) is gremlins' --workers: the machine is
# shared, and each worker is a `go test` build. MUTATION_TIMEOUT_COEFFICIENT
# (default 30) multiplies the time of the package's coverage run into the
# time a mutant's test run, its build included, may take before it counts
# as timed out: at 10, two mutants of pkg/caches timed out at 58 s, built
# at nice 19 on a loaded machine, one of which fails its tests after 5 s
# when run by hand. The JSON of each package (every mutant's position and
# status) and the log are written to MUTATION_OUT (default bin/mutations).
#
# The binary is built from the Go module proxy once per version, into the
# cache that hack/golangci-lint.sh and hack/cluster.sh use.
set -o errexit -o nounset -o pipefail

readonly VERSION=v0.6.0
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly ROOT
readonly WORKERS="${MUTATION_WORKERS:-1}"
readonly TIMEOUT_COEFFICIENT="${MUTATION_TIMEOUT_COEFFICIENT:-30}"
readonly OUT="${MUTATION_OUT:-${ROOT}/bin/mutations}"
readonly DEFAULT_PACKAGES=(pkg/children pkg/status pkg/configrollout pkg/caches pkg/canary)

# shellcheck source=hack/gotool.sh
source "${ROOT}/hack/gotool.sh"
GREMLINS=$(gotool gremlins github.com/go-gremlins/gremlins/cmd/gremlins "${VERSION}")
readonly GREMLINS

packages=("$@")
if [[ ${#packages[@]} -eq 0 ]]; then
	packages=("${DEFAULT_PACKAGES[@]}")
fi

mkdir -p "${OUT}"
# gremlins times its coverage run to set the mutants' timeout: a cached
# test result would make that time, and so the timeout, near zero.
export GOFLAGS="${GOFLAGS:-} -count=1"

# gremlins v0.6.0 ends its output with these lines:
#   Killed: K, Lived: L, Not covered: N
#   Timed out: T, Not viable: V, Skipped: S
#   Test efficacy: E%
#   Mutator coverage: C%
summary() {
	sed -n \
		-e 's/^Killed: \([0-9]*\), Lived: \([0-9]*\), Not covered: \([0-9]*\).*/k=\1 l=\2 n=\3/p' \
		-e 's/^Timed out: \([0-9]*\),.*/t=\1/p' \
		-e 's/^Test efficacy: \([0-9.]*\)%.*/e=\1/p' \
		-e 's/^Mutator coverage: \([0-9.]*\)%.*/c=\1/p' \
		"$1" | tr '\n' ' '
}

declare -A seconds
for pkg in "${packages[@]}"; do
	name=${pkg//\//-}
	echo "gremlins: ${pkg}" >&2
	start=${SECONDS}
	# From the module root with the package's directory as the path:
	# gremlins then measures coverage of, and mutates, that package only.
	(cd "${ROOT}" && "${GREMLINS}" unleash \
		--workers "${WORKERS}" \
		--timeout-coefficient "${TIMEOUT_COEFFICIENT}" \
		--output-statuses lct \
		--output "${OUT}/${name}.json" \
		"${ROOT}/${pkg}") 2>&1 | tee "${OUT}/${name}.log"
	seconds[${pkg}]=$((SECONDS - start))
done

echo
printf '%-20s %7s %6s %12s %10s %9s %9s %8s\n' package killed lived "not covered" "timed out" efficacy coverage time
for pkg in "${packages[@]}"; do
	name=${pkg//\//-}
	k=- l=- n=- t=- e=- c=-
	eval "$(summary "${OUT}/${name}.log")"
	printf '%-20s %7s %6s %12s %10s %8s%% %8s%% %7ss\n' "${pkg}" "$k" "$l" "$n" "$t" "$e" "$c" "${seconds[${pkg}]}"
done

# A mutant times out when its tests run past the timeout, which an
# infinite loop does, and so does a machine paused or loaded meanwhile:
# re-run the package before counting one as anything but that.
echo
echo "Lived and timed out:"
for pkg in "${packages[@]}"; do
	name=${pkg//\//-}
	sed -n "s#^ *\(LIVED\|TIMED OUT\) \([A-Z_]*\) at \(.*\)\$#  \1 ${pkg}/\3 \2#p" "${OUT}/${name}.log"
done
