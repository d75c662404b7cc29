#!/usr/bin/env bash
# Local Kubernetes cluster for developing and testing the controller.
#
# Real etcd, kube-apiserver, kube-controller-manager and kube-scheduler, plus
# kwok fake nodes (pods scheduled on them become Running without containers),
# run as plain processes by `kwokctl --runtime binary`. Every binary is built
# from Go modules (no downloads besides the Go module proxy) and cached outside
# the clone, keyed by version, so only the first start on a machine is slow.
#
# Run `hack/cluster.sh --help` for usage.
set -euo pipefail

readonly ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly TOOLS_DIR="${ROOT_DIR}/hack/tools"
readonly AUDIT_POLICY="${TOOLS_DIR}/audit-policy.yaml"
readonly TEST_STAGES="${TOOLS_DIR}/kwok-stages.yaml"
# CLUSTER_MODFILE picks another Kubernetes release: a go.mod of the tools
# module written by hack/tools/gen-go-mod.sh, such as the oldest supported
# release's (hack/tools/compat.mod, for `make test-compat`).
readonly MODFILE="${CLUSTER_MODFILE:-${TOOLS_DIR}/go.mod}"

# Versions: Kubernetes and etcd come from the tools module's go.mod
# (regenerate it with hack/tools/gen-go-mod.sh), kwok is installed with
# `go install`.
gomod_version() { awk -v m="$1" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "${MODFILE}"; }
readonly K8S_VERSION="$(gomod_version k8s.io/kubernetes)"
readonly ETCD_VERSION="$(gomod_version go.etcd.io/etcd/server/v3)"
readonly KWOK_VERSION="v0.8.0"

readonly CACHE_DIR="${DEPLOYOBJECT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deployobject-controller}"
readonly BIN_DIR="${CACHE_DIR}/k8s-${K8S_VERSION}/bin"      # etcd, kube-*, kubectl
readonly KWOK_BIN_DIR="${CACHE_DIR}/kwok-${KWOK_VERSION}/bin" # kwok, kwokctl

readonly K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
readonly KWOK_BINARIES=(kwokctl kwok)

# kwokctl reads KWOK_WORKDIR itself; default ~/.kwok.
readonly KWOK_DIR="${KWOK_WORKDIR:-$HOME/.kwok}"
readonly NODES="${CLUSTER_NODES:-2}"
readonly NODE_PODS="${CLUSTER_NODE_PODS:-10000}"
readonly NODE_CPU="${CLUSTER_NODE_CPU:-1000}"

log() { echo "cluster.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
	cat <<EOF
Usage: hack/cluster.sh COMMAND [ARGS]

Commands:
  build                      Build missing binaries into the cache; print the bin dir.
  up [NAME] [-- FLAGS...]    Build if needed, create (or reuse/restart) cluster NAME, add
                             ${NODES} kwok nodes, wait until they are Ready; print the kubeconfig path.
                             FLAGS are passed to 'kwokctl create cluster' (e.g. --kube-apiserver-port 6443).
  down [NAME]                Delete cluster NAME and stop its processes (no error if absent).
  kubeconfig [NAME]          Print the kubeconfig path of cluster NAME.
  bindir                     Print the directory holding kubectl, kube-apiserver, etcd, ...
  kubectl [NAME --] ARGS...  Run the built kubectl against cluster NAME.
  status [NAME]              Show the components of cluster NAME.

NAME defaults to \$CLUSTER_NAME, else "deployobject".

Environment:
  CLUSTER_NAME             default cluster name
  CLUSTER_NODES            number of kwok nodes for 'up' (default 2)
  CLUSTER_NODE_PODS        pods each kwok node accepts (default 10000)
  CLUSTER_NODE_CPU         CPUs each kwok node offers (default 1000)
  DEPLOYOBJECT_CACHE_DIR   binary cache (default \${XDG_CACHE_HOME:-~/.cache}/deployobject-controller)
  KWOK_WORKDIR             kwokctl state dir (default ~/.kwok); clusters live in \$KWOK_WORKDIR/clusters/NAME
  KWOKCTL_V                kwokctl log level (default WARN; INFO or DEBUG to see every step)

Versions: Kubernetes ${K8S_VERSION}, etcd ${ETCD_VERSION}, kwok ${KWOK_VERSION}.
Bin dir:  ${BIN_DIR}
EOF
}

# ---------------------------------------------------------------------------
# build

# Serialize builds between concurrent invocations (e.g. two `up`s at once).
with_build_lock() {
	mkdir -p "${CACHE_DIR}"
	if command -v flock >/dev/null 2>&1; then
		exec 9>"${CACHE_DIR}/.build.lock"
		flock 9
	fi
}

# Builds the missing etcd and Kubernetes binaries (main packages of the
# tools module) with one `go build`: the packages they share (most of
# k8s.io/kubernetes and client-go) compile once and the links overlap, which
# one build per binary did not allow. Writes into a temporary directory first
# so an interrupted build never leaves a truncated binary behind.
build_k8s() { # LDFLAGS BINARY...
	local ldflags="$1" tmp b start=${SECONDS}
	shift
	local pkgs=()
	for b in "$@"; do
		case "$b" in
		etcd) pkgs+=(./etcd) ;;
		*) pkgs+=("k8s.io/kubernetes/cmd/$b") ;;
		esac
	done
	tmp="$(mktemp -d "${BIN_DIR}/.build.XXXXXX")"
	log "building $* ..."
	(
		cd "${TOOLS_DIR}"
		GOWORK=off CGO_ENABLED=0 go build -modfile="${MODFILE}" -trimpath -buildvcs=false -mod=readonly \
			-ldflags "-s -w ${ldflags}" -o "${tmp}/" "${pkgs[@]}"
	) || { rm -rf "${tmp}"; log "build of $* failed"; return 1; }
	for b in "$@"; do mv -f "${tmp}/$b" "${BIN_DIR}/$b"; done
	rm -rf "${tmp}"
	log "built $* in $((SECONDS - start))s"
}

# Installs the missing kwok binaries with one `go install` (one module).
build_kwok() { # BINARY...
	local tmp b start=${SECONDS} pkgs=()
	for b in "$@"; do pkgs+=("sigs.k8s.io/kwok/cmd/$b@${KWOK_VERSION}"); done
	tmp="$(mktemp -d "${KWOK_BIN_DIR}/.install.XXXXXX")"
	log "installing $* (sigs.k8s.io/kwok ${KWOK_VERSION}) ..."
	(cd "${tmp}" && GOWORK=off GOBIN="${tmp}" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "${pkgs[@]}") ||
		{ rm -rf "${tmp}"; log "install of $* failed"; return 1; }
	for b in "$@"; do mv -f "${tmp}/$b" "${KWOK_BIN_DIR}/$b"; done
	rm -rf "${tmp}"
	log "built $* in $((SECONDS - start))s"
}

build() {
	command -v go >/dev/null 2>&1 || die "go is not installed"
	[[ -n "${K8S_VERSION}" && -n "${ETCD_VERSION}" ]] || die "cannot read versions from ${MODFILE}"

	local missing=() b
	for b in etcd "${K8S_BINARIES[@]}"; do [[ -x "${BIN_DIR}/$b" ]] || missing+=("$b"); done
	for b in "${KWOK_BINARIES[@]}"; do [[ -x "${KWOK_BIN_DIR}/$b" ]] || missing+=("$b"); done
	if [[ ${#missing[@]} -eq 0 ]]; then
		echo "${BIN_DIR}"
		return
	fi

	with_build_lock
	# Another invocation (such as the one .ci/run starts beside verify) may
	# have built them while we waited for the lock.
	local k8s=() kwok=()
	for b in etcd "${K8S_BINARIES[@]}"; do [[ -x "${BIN_DIR}/$b" ]] || k8s+=("$b"); done
	for b in "${KWOK_BINARIES[@]}"; do [[ -x "${KWOK_BIN_DIR}/$b" ]] || kwok+=("$b"); done
	if [[ ${#k8s[@]} -eq 0 && ${#kwok[@]} -eq 0 ]]; then
		echo "${BIN_DIR}"
		return
	fi
	mkdir -p "${BIN_DIR}" "${KWOK_BIN_DIR}"
	rm -rf "${BIN_DIR}"/*.tmp.* "${BIN_DIR}"/.build.* "${KWOK_BIN_DIR}"/.install.* # left by interrupted builds
	log "building into ${CACHE_DIR} (first time only; it took 43 min on 2 cores beside the rest of a cold .ci/run): ${k8s[*]} ${kwok[*]}"

	# Without these the binaries report v0.0.0 (server version, user agents).
	# component-base feeds `version`/`--version`; client-go's copy feeds the
	# User-Agent of every client. gitCommit is unknown outside a git checkout
	# of kubernetes; empty makes user agents say "kubernetes/unknown".
	local minor="${K8S_VERSION#v1.}" && minor="${minor%%.*}"
	local k8s_ldflags="" pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		k8s_ldflags+=" -X ${pkg}.gitVersion=${K8S_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
		k8s_ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.gitCommit="
	done

	# kwok (its own module, a small share of the work) builds beside the
	# Kubernetes build: it fills the gaps the one big build leaves on the
	# cores (module downloads, serial links).
	local kwok_pid="" failed=0 start=${SECONDS}
	if [[ ${#kwok[@]} -gt 0 ]]; then
		build_kwok "${kwok[@]}" &
		kwok_pid=$!
	fi
	if [[ ${#k8s[@]} -gt 0 ]]; then build_k8s "${k8s_ldflags}" "${k8s[@]}" || failed=1; fi
	if [[ -n "${kwok_pid}" ]]; then wait "${kwok_pid}" || failed=1; fi
	((failed == 0)) || die "building the cluster's binaries failed"
	log "built the cluster's binaries in $((SECONDS - start))s"
	# PHASE_LOG: see hack/phases.sh.
	if [[ -n "${PHASE_LOG:-}" ]]; then echo "cluster-build $((SECONDS - start))" >>"${PHASE_LOG}"; fi
	echo "${BIN_DIR}"
}

# ---------------------------------------------------------------------------
# cluster

kwokctl() {
	# KWOK_KUBECTL_BINARY: `kwokctl kubectl` would otherwise download kubectl.
	# --v: kwokctl logs every step as JSON when not on a terminal; keep
	# warnings and errors only unless KWOKCTL_V=INFO (or DEBUG) is set.
	KWOK_KUBECTL_BINARY="${BIN_DIR}/kubectl" "${KWOK_BIN_DIR}/kwokctl" --v "${KWOKCTL_V:-WARN}" "$@"
}

kubeconfig_path() { echo "${KWOK_DIR}/clusters/$1/kubeconfig.yaml"; }

kc() { # NAME ARGS...
	local name="$1"
	shift
	"${BIN_DIR}/kubectl" --kubeconfig "$(kubeconfig_path "${name}")" "$@"
}

cluster_exists() {
	[[ -x "${KWOK_BIN_DIR}/kwokctl" ]] || { [[ -d "${KWOK_DIR}/clusters/$1" ]]; return; }
	kwokctl get clusters 2>/dev/null | grep -qxF "$1"
}

api_ready() { kc "$1" get --raw /readyz --request-timeout=5s >/dev/null 2>&1; }

wait_for() { # TIMEOUT_SECONDS DESCRIPTION COMMAND...
	local timeout="$1" what="$2" deadline
	shift 2
	deadline=$((SECONDS + timeout))
	until "$@"; do
		((SECONDS < deadline)) || die "timed out after ${timeout}s waiting for ${what}"
		sleep 1
	done
}

node_count() { kc "$1" get nodes --no-headers 2>/dev/null | wc -l; }
enough_nodes() { (($(node_count "$1") >= NODES)); }

# Writes the kwok configuration of a new cluster to FILE: kwok's default
# stages, read from its module as kwokctl embeds them, and the e2e tests'
# stages. kwokctl drops all of its defaults as soon as it is given one stage.
stages_config() { # FILE
	local dir f
	dir="$(GOWORK=off go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -d "${dir}" ]] || die "cannot find the sigs.k8s.io/kwok ${KWOK_VERSION} module"
	{
		for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
			pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
			cat "${dir}/kustomize/stage/${f}.yaml"
			echo "---"
		done
		cat "${TEST_STAGES}"
	} >"$1"
}

# has_test_stages: a cluster made before the test stages existed lacks them.
has_test_stages() { grep -q "deployobject-test-crash-loop" "${KWOK_DIR}/clusters/$1/kwok.yaml" 2>/dev/null; }

up() {
	local name="$1"
	shift
	local start=${SECONDS}
	build >/dev/null

	if cluster_exists "${name}" && ! has_test_stages "${name}"; then
		log "cluster ${name} lacks the test stages of ${TEST_STAGES}; recreating it"
		down "${name}"
	fi
	if cluster_exists "${name}"; then
		if api_ready "${name}"; then
			log "reusing running cluster ${name}"
		else
			log "cluster ${name} exists but is not answering; starting it"
			kwokctl start cluster --name "${name}" --wait 60s >&2 ||
				die "could not start cluster ${name}; try: hack/cluster.sh down ${name}"
		fi
	else
		log "creating cluster ${name} (kubernetes ${K8S_VERSION}, etcd ${ETCD_VERSION}, kwok ${KWOK_VERSION})"
		local stages
		stages="$(mktemp)"
		stages_config "${stages}"
		# --kubeconfig "": do not touch ~/.kube/config; the cluster's own
		# kubeconfig is ${KWOK_DIR}/clusters/NAME/kubeconfig.yaml.
		# --disable-qps-limits: kube-controller-manager's default client limit
		# (20/s) would otherwise dominate the time to roll out Deployments.
		# OwnerReferencesPermissionEnforcement: on in several managed and
		# enterprise distributions, so the e2e suite proves the deploy/ RBAC
		# under it (kube-apiserver adds it to its default plugins).
		# unsafe-no-fsync: a cluster made to be thrown away loses nothing
		# that matters if the machine fails, and etcd's fsyncs would
		# otherwise wait on the disk behind every write the tests make,
		# the longer when builds share that disk.
		# leader-elect=false: one replica of each component, and with a lease
		# they exit (nothing restarts them) when the API server is away for
		# longer than the lease, which the fault tests do on purpose.
		kwokctl create cluster --name "${name}" \
			--runtime binary \
			--kubeconfig "" \
			--quiet-pull \
			--etcd-binary "${BIN_DIR}/etcd" \
			--kube-apiserver-binary "${BIN_DIR}/kube-apiserver" \
			--kube-controller-manager-binary "${BIN_DIR}/kube-controller-manager" \
			--kube-scheduler-binary "${BIN_DIR}/kube-scheduler" \
			--kwok-controller-binary "${KWOK_BIN_DIR}/kwok" \
			--kube-audit-policy "${AUDIT_POLICY}" \
			--config "${stages}" \
			--extra-args "kube-apiserver=service-cluster-ip-range=10.96.0.0/16" \
			--extra-args "kube-apiserver=enable-admission-plugins=OwnerReferencesPermissionEnforcement" \
			--disable-qps-limits \
			--extra-args "etcd=unsafe-no-fsync=true" \
			--extra-args "kube-controller-manager=leader-elect=false" \
			--extra-args "kube-scheduler=leader-elect=false" \
			--wait 120s \
			"$@" >&2 || { rm -f "${stages}"; die "kwokctl create cluster ${name} failed (logs: ${KWOK_DIR}/clusters/${name}/logs)"; }
		rm -f "${stages}"
	fi

	wait_for 120 "the API server of ${name}" api_ready "${name}"
	if ! enough_nodes "${name}"; then
		log "adding ${NODES} kwok nodes"
		# kwok's defaults of 110 pods and 32 CPUs per node would cap
		# benchmarks and fault tests at a few hundred replicas (the bench's
		# children step requests 100m for each of its 1000 pods).
		kwokctl scale node --name "${name}" --replicas "${NODES}" --param ".allocatable.pods=${NODE_PODS}" --param ".allocatable.cpu=${NODE_CPU}" >&2
	fi
	wait_for 60 "${NODES} nodes" enough_nodes "${name}"
	kc "${name}" wait --for=condition=Ready node --all --timeout=120s >/dev/null ||
		die "nodes of ${name} did not become Ready"
	log "cluster ${name} is up in $((SECONDS - start))s; kubectl: $(kubeconfig_path "${name}" | sed 's/^/--kubeconfig /')"
	kubeconfig_path "${name}"
}

down() {
	local name="$1"
	if ! cluster_exists "${name}"; then
		log "cluster ${name} does not exist"
		return 0
	fi
	[[ -x "${KWOK_BIN_DIR}/kwokctl" ]] || build >/dev/null
	kwokctl delete cluster --name "${name}" >&2
	log "deleted cluster ${name}"
}

# ---------------------------------------------------------------------------
# main

# Optional NAME argument: anything that is not a flag or `--`.
name_arg() { if [[ $# -gt 0 && "$1" != -* ]]; then echo "$1"; else echo "${CLUSTER_NAME:-deployobject}"; fi; }

main() {
	local cmd="${1:-}"
	[[ $# -gt 0 ]] && shift
	local cmd_args=("$@") name
	name="$(name_arg "$@")"
	if [[ $# -gt 0 && "$1" != -* ]]; then shift; fi

	case "${cmd}" in
	build) build ;;
	bindir) echo "${BIN_DIR}" ;;
	up)
		[[ "${1:-}" == "--" ]] && shift
		up "${name}" "$@"
		;;
	down) down "${name}" ;;
	kubeconfig) kubeconfig_path "${name}" ;;
	kubectl)
		# `kubectl NAME -- ARGS`, `kubectl -- ARGS` or `kubectl ARGS` (default NAME).
		if [[ "${cmd_args[1]:-}" == "--" ]]; then
			name="${cmd_args[0]}"
			set -- "${cmd_args[@]:2}"
		else
			name="${CLUSTER_NAME:-deployobject}"
			set -- "${cmd_args[@]}"
			[[ "${1:-}" == "--" ]] && shift
		fi
		[[ -x "${BIN_DIR}/kubectl" ]] || build >/dev/null
		exec "${BIN_DIR}/kubectl" --kubeconfig "$(kubeconfig_path "${name}")" "$@"
		;;
	status)
		cluster_exists "${name}" || die "cluster ${name} does not exist"
		kwokctl get components --name "${name}"
		;;
	-h | --help | help) usage ;;
	"") usage >&2; exit 2 ;;
	*) usage >&2; die "unknown command: ${cmd}" ;;
	esac
}

main "$@"
