#!/usr/bin/env bash
# Fails when generated code, the CRD, the API reference or the chart's copies
# of the CRD, alerts and dashboard are stale, that is, when
# hack/update-codegen.sh would change them. It regenerates into a scratch
# copy of the tree, so the working tree is never modified.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SCRATCH=$(mktemp -d)
trap 'rm -rf "${SCRATCH}"' EXIT

GENERATED=(pkg/generated pkg/apis/app/v1/zz_generated.deepcopy.go pkg/apis/app/v1/zz_generated.register.go crd/app.deployobject.dev_deployobjects.yaml docs/api-reference.md
    charts/deployobject-controller/crds charts/deployobject-controller/files)

tar -C "${ROOT}" --exclude=./.git --exclude=./bin --exclude=./dist --exclude=./hack/tools -cf - . | tar -C "${SCRATCH}" -xf -
# Start from nothing, so files that should no longer exist are caught too.
for p in "${GENERATED[@]}"; do rm -rf "${SCRATCH:?}/${p}"; done
if ! "${SCRATCH}/hack/update-codegen.sh" >"${SCRATCH}/codegen.log" 2>&1; then
    cat "${SCRATCH}/codegen.log" >&2
    echo "hack/update-codegen.sh failed." >&2
    exit 1
fi

status=0
for p in "${GENERATED[@]}"; do
    if ! diff -Naupr "${ROOT}/${p}" "${SCRATCH}/${p}"; then
        status=1
    fi
done
if [[ ${status} -ne 0 ]]; then
    echo "Generated code is stale: run hack/update-codegen.sh and commit the result." >&2
    exit 1
fi
echo "Generated code is up to date."
