#!/usr/bin/env bash
# `make run`: starts the local cluster (building what is missing), installs
# the CRD, then runs the controller in the foreground against it.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "${ROOT}"
NAME=${CLUSTER_NAME:-deployobject}

kubeconfig=$(hack/cluster.sh up "${NAME}")
go run ./hack/install-crd --kubeconfig "${kubeconfig}" --dir crd
# The Gateway API's standard CRDs, from the module the controller is built
# with, so that a DeployObject may route through an HTTPRoute.
go run ./hack/install-crd --kubeconfig "${kubeconfig}" \
    --dir "$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/standard"
kubectl="$(hack/cluster.sh bindir)/kubectl --kubeconfig ${kubeconfig}"

cat >&2 <<MSG

The local cluster "${NAME}" is up and the CRDs (DeployObject, Gateway API) are installed. In another terminal:

  alias k='${kubectl}'
  k apply -f example/
  k get dobj -w
  k describe dobj web

Ctrl-C stops the controller; 'make down' removes the cluster.

MSG
exec "${ROOT}/bin/deployobject-controller" --kubeconfig "${kubeconfig}" "$@"
