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

# The release artifacts TestReleaseArtifacts installs: dist/ as `make
# build-installer` writes it, and the helm CLI of the version hack/release
# pins (its go.mod's tool directive), both before the cluster starts.
make --no-print-directory build-installer >&2
go build -C hack/release -o "${ROOT}/bin/helm" helm.sh/helm/v4/cmd/helm

start=$(date +%s)
kubeconfig=$(hack/cluster.sh up "${NAME}")
echo "e2e: cluster ${NAME} up in $(( $(date +%s) - start ))s" >&2

# client-go's detectors, in every controller the suite starts (they inherit
# this environment): a cached object modified after it entered an informer's
# cache, or a watch list that disagrees with a list from etcd, panics the
# controller. Set either to false to run without.
export KUBE_CACHE_MUTATION_DETECTOR="${KUBE_CACHE_MUTATION_DETECTOR:-true}"
export KUBE_WATCHLIST_INCONSISTENCY_DETECTOR="${KUBE_WATCHLIST_INCONSISTENCY_DETECTOR:-true}"

E2E_KUBECONFIG="${kubeconfig}" \
E2E_CONTROLLER_BIN="${ROOT}/bin/deployobject-controller" \
E2E_KUBECTL="$(hack/cluster.sh bindir)/kubectl" \
E2E_DIST="${ROOT}/dist" \
E2E_HELM="${ROOT}/bin/helm" \
    go test -tags e2e -count=1 -timeout 40m -v ./test/e2e/ "$@"
