#!/usr/bin/env bash
# Runs the end-to-end suite against a fresh local cluster and removes the
# cluster afterwards, also when a test fails. Extra arguments go to `go test`
# (for example -run TestKubectlScale).
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "${ROOT}"
NAME=${E2E_CLUSTER:-deployobject-e2e}

# A cluster left over by an interrupted run is not fresh: remove it.
hack/cluster.sh down "${NAME}" >/dev/null 2>&1 || true
trap 'hack/cluster.sh down "${NAME}" >/dev/null 2>&1 || echo "e2e: could not remove cluster ${NAME}" >&2' EXIT

# phase NAME SINCE: reports the time since SINCE (date +%s), and appends it
# to PHASE_LOG (see hack/phases.sh).
phase() {
	local elapsed=$(( $(date +%s) - $2 ))
	echo "e2e: $1 took ${elapsed}s" >&2
	if [[ -n "${PHASE_LOG:-}" ]]; then echo "test-e2e/$1 ${elapsed}" >>"${PHASE_LOG}"; fi
}

# The release artifacts TestReleaseArtifacts installs: dist/ as `make
# build-installer` writes it, and the helm CLI of the version hack/release
# pins (its go.mod's tool directive), both before the cluster starts. `go
# tool -n` prints the path of the helm binary in the build cache, built
# there once rather than linked again into each checkout.
start=$(date +%s)
make --no-print-directory build-installer >&2
helm=$(go -C hack/release tool -n helm)
phase release-artifacts "${start}"

start=$(date +%s)
kubeconfig=$(hack/cluster.sh up "${NAME}")
phase cluster-up "${start}"

# client-go's detectors, in every controller the suite starts (they inherit
# this environment): a cached object modified after it entered an informer's
# cache, or a watch list that disagrees with a list from etcd, panics the
# controller. Set either to false to run without.
export KUBE_CACHE_MUTATION_DETECTOR="${KUBE_CACHE_MUTATION_DETECTOR:-true}"
export KUBE_WATCHLIST_INCONSISTENCY_DETECTOR="${KUBE_WATCHLIST_INCONSISTENCY_DETECTOR:-true}"

# The suite's output (go test -v) also goes to E2E_LOG, by default a file
# outside the checkout; the durations of the top-level tests are summed up
# from it at the end, also when a test fails.
E2E_LOG=${E2E_LOG:-$(mktemp -t deployobject-e2e-XXXXXX.log)}
summary() {
	local results
	results=$(awk '/^--- (PASS|FAIL|SKIP): Test/ { d = $4; gsub(/[()s]/, "", d); printf "%8.1f  %s %s\n", d, $2, $3 }' "${E2E_LOG}")
	echo "e2e: the output is in ${E2E_LOG}; the slowest tests (seconds):" >&2
	sort -rn <<<"${results}" | head -n 15 >&2
	awk '{ sum += $1; n++ } END { printf "e2e: %d top-level tests, %.0fs in sum (what they would take one after another)\n", n, sum }' <<<"${results}" >&2
}

# -parallel: how many of the tests that call t.Parallel() run at once (go
# test's default is the number of cores). They spend most of their time
# waiting for the cluster and the controller, so more than the cores fit;
# but the API server and the controllers share those cores, and at 8 on 2
# cores the backoff checks of TestQuotaRefusalsAreReported and
# TestAdmissionDenialsAreReported failed once, where 4 and 6 passed. The
# tests are mostly CPU-bound by then: 6 took 871 s for 77 tests (2,185 s in
# sum), 4 took 865 s for 73 (2,034 s in sum), both in .ci/run.
E2E_PARALLEL=${E2E_PARALLEL:-6}

start=$(date +%s)
status=0
E2E_KUBECONFIG="${kubeconfig}" \
E2E_CONTROLLER_BIN="${ROOT}/bin/deployobject-controller" \
E2E_KUBECTL="$(hack/cluster.sh bindir)/kubectl" \
E2E_DIST="${ROOT}/dist" \
E2E_HELM="${helm}" \
    go test -tags e2e -count=1 -timeout 40m -parallel "${E2E_PARALLEL}" -v ./test/e2e/ "$@" 2>&1 | tee "${E2E_LOG}" || status=$?
phase tests "${start}"
summary
exit "${status}"
