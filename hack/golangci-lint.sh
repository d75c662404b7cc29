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
readonly CACHE_DIR="${DEPLOYOBJECT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deployobject-controller}"
readonly BIN_DIR="${CACHE_DIR}/golangci-lint-${VERSION}"
readonly MODULES=(. test/gitops test/monitoring test/bench/peer hack/image hack/release)

if [[ ! -x "${BIN_DIR}/golangci-lint" ]]; then
	echo "golangci-lint: building ${VERSION} into ${BIN_DIR} (first time only)" >&2
	mkdir -p "${BIN_DIR}"
	# A temporary directory of its own, so that a build cut short leaves no
	# binary behind that looks finished.
	tmp=$(mktemp -d "${BIN_DIR}/.build.XXXXXX")
	trap 'rm -rf "${tmp}"' EXIT
	GOBIN="${tmp}" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${VERSION}"
	mv "${tmp}/golangci-lint" "${BIN_DIR}/golangci-lint"
fi

status=0
for module in "${MODULES[@]}"; do
	echo "golangci-lint: ${module}" >&2
	if ! (cd "${ROOT}/${module}" && "${BIN_DIR}/golangci-lint" run --config "${ROOT}/.golangci.yml" "$@" ./...); then
		status=1
	fi
done
exit "${status}"
