# Run `make help` for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -o errexit -o nounset -o pipefail -c
.DEFAULT_GOAL := help

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN     := bin/deployobject-controller
PEER    := bin/peer-controller
IMAGE   := bin/image
GOFILES := $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the controller binary into bin/.
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BIN) .

.PHONY: generate
generate: ## Regenerate clients, deepcopy and the CRD after changing pkg/apis.
	hack/update-codegen.sh

.PHONY: verify
verify: lint ## Check that generated code is fresh, code is gofmt-ed, go vet and golangci-lint pass.
	hack/verify-codegen.sh
	@out=$$(gofmt -l $(GOFILES)); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go vet -tags e2e ./test/e2e/
	cd test/gitops && go vet ./...
	cd test/monitoring && go vet ./...
	cd hack/image && go vet ./...
	cd test/bench/peer && go vet ./...

.PHONY: lint
lint: ## Run golangci-lint (.golangci.yml) on every module; built once per version into ~/.cache/deployobject-controller.
	hack/golangci-lint.sh

.PHONY: test-unit
test-unit: ## Unit tests, with the race detector; the benchmark's peer (module test/bench/peer) without it.
	go test -race -count=1 ./...
	cd test/bench/peer && go test -count=1 ./...

.PHONY: test-gitops
test-gitops: ## The Argo CD health check and Flux's kstatus on the fixtures e2e captured (module test/gitops).
	cd test/gitops && go test -count=1 ./...

.PHONY: test-monitoring
test-monitoring: ## The alerts and dashboard of deploy/components/monitoring against the metrics e2e captured, and the kustomize builds of it and of deploy/components/metrics-networkpolicy (module test/monitoring).
	bindir=$$(hack/cluster.sh build) && cd test/monitoring && KUBECTL="$$bindir/kubectl" go test -count=1 ./...

.PHONY: image
image: build ## Build the container image of bin/ as an OCI image layout in bin/image, without a container engine.
	cd hack/image && go run . build -binary ../../$(BIN) -version $(VERSION) -out ../../$(IMAGE)

.PHONY: test-image
test-image: image ## Check the image against the Dockerfile: entrypoint, user 65532, and the binary in it prints its version.
	cd hack/image && go test -count=1 ./...
	cd hack/image && go run . check -layout ../../$(IMAGE) -dockerfile ../../Dockerfile -version $(VERSION)
	@if [[ $$(id -u) == 0 ]] && command -v crun >/dev/null && command -v umoci >/dev/null; then \
		hack/image/run-crun.sh $(IMAGE) $(VERSION); \
	else \
		echo "test-image: not run under a container runtime (needs root, and crun and umoci from Debian's packages)"; \
	fi

FUZZTIME ?= 10s
.PHONY: test-fuzz
test-fuzz: ## Run each fuzz target for FUZZTIME (default 10s); seed corpora are in each package's testdata/fuzz.
	@found=0; for pkg in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg | xargs -n1 dirname | sort -u | sed 's|^|./|'); do \
		for target in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			found=1; go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done; if [[ $$found == 0 ]]; then echo "test-fuzz: no fuzz target found" >&2; exit 1; fi

.PHONY: test-e2e
test-e2e: build ## End-to-end tests against a fresh local cluster, removed afterwards.
	hack/e2e.sh

.PHONY: test
test: test-unit test-gitops test-monitoring test-image test-fuzz test-e2e ## Unit tests, GitOps health checks, the monitoring component, the image, short fuzzing, then end-to-end tests. What CI runs.

.PHONY: run
run: build ## Start the local cluster and run the controller against it.
	hack/run.sh

.PHONY: cluster
cluster: ## Start the local cluster only (builds what is missing).
	hack/cluster.sh up

.PHONY: down
down: ## Remove the local cluster.
	hack/cluster.sh down

.PHONY: clean
clean: ## Remove build output.
	rm -rf bin

BENCH_ARGS ?=

.PHONY: peer
peer: ## Build the benchmark's peer, a controller as kubebuilder scaffolds it (module test/bench/peer), into bin/.
	CGO_ENABLED=0 go build -C test/bench/peer -trimpath -ldflags "-s -w" -o ../../../$(PEER) .

.PHONY: bench
bench: build peer ## Benchmark the controller, and the peer beside it, on a dedicated local cluster; the backlog three times (BENCH_ARGS="--n 50 --mem-n 200 --runs 1").
	hack/bench.sh $(BENCH_ARGS)

.PHONY: bench-sweep
bench-sweep: build ## Time the backlog at several --workers and client limits, to choose the defaults (about 20 min).
	hack/bench.sh --steps limit,sweep --runs 1 --out test/bench/results-sweep.json $(BENCH_ARGS)
