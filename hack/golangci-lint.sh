#!/usr/bin/env bash
# Runs golangci-lint, with the repository's .golangci.yml, on every Go module
# the project writes: the controller's, and those of test/ and hack/ except
# hack/tools, which only pins the Kubernetes and etcd versions the local
# cluster is built from. Arguments go to each `golangci-lint run`, e.g.
# --fix.
#
# The binary is built from the Go module proxy once per version, into the
# cache that hack/cluster.sh uses for the cluster's binaries.
set -o errexit -o nounset -o pipefail

readonly VERSION=v2.15.0
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly ROOT
readonly MODULES=(. test/gitops test/monitoring test/bench/peer hack/image hack/release)

# shellcheck source=hack/gotool.sh
source "${ROOT}/hack/gotool.sh"
GOLANGCI_LINT=$(gotool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "${VERSION}")
readonly GOLANGCI_LINT

status=0
for module in "${MODULES[@]}"; do
	echo "golangci-lint: ${module}" >&2
	if ! (cd "${ROOT}/${module}" && "${GOLANGCI_LINT}" run --config "${ROOT}/.golangci.yml" "$@" ./...); then
		status=1
	fi
done
exit "${status}"
