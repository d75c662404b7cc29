#!/usr/bin/env bash
# Regenerates everything derived from pkg/apis: deepcopy, scheme registration,
# the typed clientset (and its fake), listers, informers, apply configurations,
# the CustomResourceDefinition in crd/ and the API reference in
# docs/api-reference.md. Run it after changing the types. It also copies into
# the Helm chart the files of the repository the chart carries (the CRD, and
# the monitoring component's alerts and dashboard): run it after changing
# those too.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "${ROOT}"

# controller-gen only writes the CRD; it is not a dependency of the binary, so
# it is pinned here rather than in go.mod. v0.23 is the newest release, built on k8s 1.37.
CONTROLLER_GEN_VERSION=v0.23.0
# crd-ref-docs writes the API reference from the same types and markers; it
# is a documentation tool, pinned here like controller-gen.
CRD_REF_DOCS_VERSION=v0.3.0
MODULE=deployobject.dev/controller

# code-generator is pinned by the tool directive in go.mod. `go list -m` does
# not download, so on an empty module cache the download comes first.
go mod download k8s.io/code-generator
CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ -z "${CODEGEN_PKG}" || ! -f "${CODEGEN_PKG}/kube_codegen.sh" ]]; then
    echo "cannot find k8s.io/code-generator's kube_codegen.sh (module dir: '${CODEGEN_PKG}')" >&2
    exit 1
fi
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"

kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" "${ROOT}/pkg/apis"
kube::codegen::gen_register --boilerplate "${BOILERPLATE}" "${ROOT}/pkg/apis"
kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --output-dir "${ROOT}/pkg/generated" \
    --output-pkg "${MODULE}/pkg/generated" \
    --boilerplate "${BOILERPLATE}" \
    "${ROOT}/pkg/apis"

go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}" \
    crd:crdVersions=v1 \
    paths=./pkg/apis/... \
    output:crd:artifacts:config=crd
# Bounds and refused volume sources for the types embedded from k8s.io/api
# (see hack/crdpost).
go run ./hack/crdpost crd/app.deployobject.dev_deployobjects.yaml

# Helm reads nothing outside a chart's directory, so the chart holds copies;
# hack/release's tests compare what it renders with the kustomize builds.
CHART=charts/deployobject-controller
mkdir -p "${CHART}/crds" "${CHART}/files"
cp crd/app.deployobject.dev_deployobjects.yaml "${CHART}/crds/"
cp deploy/components/monitoring/prometheusrule.yaml deploy/components/monitoring/dashboard.json "${CHART}/files/"

go run "github.com/elastic/crd-ref-docs@${CRD_REF_DOCS_VERSION}" \
    --source-path=./pkg/apis \
    --config=hack/api-reference/config.yaml \
    --renderer=markdown \
    --output-path=docs/api-reference.md \
    --log-level=ERROR
