#!/usr/bin/env bash
# `make bench`: measures the controller (test/bench) against a dedicated local
# cluster, created fresh and removed afterwards, also when the run fails.
# The limit, backlog and peer backlog run three times over (--runs), each
# backlog right after a limit of its own; the run judges the median of their
# limit / reconciled (>= 0.9 at N=1000, >= 0.8 at 10,000) and of the
# throughput over the peer's (>= 2.5x), and every run's writes and CPU.
# Arguments go to the benchmark, for example:
#   hack/bench.sh --n 50 --mem-n 200 --steps backlog,mem
#   hack/bench.sh --controller-arg=--workers=32
#   hack/bench.sh --peer=          # without the peer (test/bench/peer)
#   hack/bench.sh --runs 1         # one limit and backlog: quicker, judged as one run
#   hack/bench.sh --cpu-profile    # CPU profiles of the backlogs, at a CPU cost
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "${ROOT}"
NAME=${BENCH_CLUSTER:-deployobject-bench}

# A cluster left over by an interrupted run has seen other load: remove it.
hack/cluster.sh down "${NAME}" >/dev/null 2>&1 || true
trap 'hack/cluster.sh down "${NAME}" >/dev/null 2>&1 || echo "bench: could not remove cluster ${NAME}" >&2' EXIT

# `make bench` has just built them; building again is a no-op then, and
# keeps a direct run of this script from measuring stale binaries.
make --no-print-directory build peer >&2

# Without --disable-qps-limits kube-controller-manager keeps its default
# client limit of 20 requests/s, rolls out about 5 Deployments a second, and
# time to Ready would measure that rather than the controller.
cluster_flags=(--disable-qps-limits)
start=$(date +%s)
kubeconfig=$(hack/cluster.sh up "${NAME}" -- "${cluster_flags[@]}")
echo "bench: cluster ${NAME} up in $(( $(date +%s) - start ))s" >&2

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
go run ./test/bench --kubeconfig "${kubeconfig}" --controller bin/deployobject-controller --peer bin/peer-controller \
	--commit "${commit}" --cluster "kwokctl ${cluster_flags[*]}" "$@"
