# Run `make help` for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -o errexit -o nounset -o pipefail -c
.DEFAULT_GOAL := help

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The controller's image in the release artifacts (build-installer,
# build-chart): REPOSITORY:TAG, REPOSITORY@DIGEST or both. Set your
# registry's, for example IMG=REGISTRY/deployobject-controller:$(VERSION).
# `make image-push` pushes there, and only when IMG is given: the default
# names no registry.
IMG     ?= deployobject-controller:$(VERSION)
BIN     := bin/deployobject-controller
PEER    := bin/peer-controller
IMAGE   := bin/image
GOFILES := $(shell git ls-files '*.go' 2>/dev/null)
# How the controller is built, by `make build` and for each platform of the
# image: static, and with -trimpath so that the binary does not depend on
# the checkout's path.
GOBUILD  = CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)"

# The image's platforms, and what it says of its origin: the commit, the
# commit's time (SOURCE_DATE_EPOCH: the time stamp of every file, layer and
# document in the image, so that one commit makes one digest) and the
# origin remote, if it is an http(s) URL.
PLATFORMS         ?= linux/amd64 linux/arm64
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
SOURCE            ?= $(shell git remote get-url origin 2>/dev/null)
IMAGE_META         = -version "$(VERSION)" -revision "$(REVISION)" -created "$(SOURCE_DATE_EPOCH)" -source "$(SOURCE)"

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the controller binary into bin/.
	$(GOBUILD) -o $(BIN) .

.PHONY: generate
generate: ## Regenerate clients, deepcopy and the CRD after changing pkg/apis, and the chart's copies of the CRD, alerts and dashboard.
	hack/update-codegen.sh

# verify and test run their parts one after another through hack/phases.sh,
# which times each (and, under .ci/run, runs test-chart once for both).
.PHONY: verify
verify: ## Check that generated code is fresh, code is gofmt-ed, go vet and golangci-lint pass, and the Helm chart lints and matches deploy/.
	@hack/phases.sh lint verify-codegen verify-gofmt vet test-chart

.PHONY: verify-codegen
verify-codegen:
	hack/verify-codegen.sh

.PHONY: verify-gofmt
verify-gofmt:
	@out=$$(gofmt -l $(GOFILES)); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet:
	go vet ./...
	go vet -tags e2e ./test/e2e/
	cd test/gitops && go vet ./...
	cd test/monitoring && go vet ./...
	cd hack/image && go vet ./...
	cd test/bench/peer && go vet ./...
	cd hack/release && go vet ./...

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
test-monitoring: ## The alerts and dashboard of deploy/components/monitoring against the metrics e2e captured, and the kustomize builds of it, of deploy/components/metrics-networkpolicy and of deploy/components/metrics-cert-manager (module test/monitoring).
	bindir=$$(hack/cluster.sh build) && cd test/monitoring && KUBECTL="$$bindir/kubectl" go test -count=1 ./...

.PHONY: test-chart
test-chart: ## helm lint --strict on the Helm chart, its renders against the kustomize builds of deploy/, and the installers of build-installer (module hack/release).
	cd hack/release && go test -count=1 ./...

.PHONY: build-installer
build-installer: ## Write dist/install.yaml (deploy/ with the image IMG) and each optional piece as a file of its own (docs/installing.md).
	cd hack/release && go run . installer -root $(CURDIR) -out $(CURDIR)/dist -image $(IMG) -version $(VERSION)

.PHONY: build-chart
build-chart: ## Package the Helm chart into dist/, versioned from VERSION, its image defaulting to IMG.
	cd hack/release && go run . chart -root $(CURDIR) -out $(CURDIR)/dist -image $(IMG) -version $(VERSION)

.PHONY: image
image: ## Build the controller for PLATFORMS into bin/OS-ARCH/, and one OCI image of them with an SBOM each in bin/image (an OCI layout), without a container engine.
	for platform in $(PLATFORMS); do \
		GOOS=$${platform%/*} GOARCH=$${platform#*/} $(GOBUILD) -o bin/$${platform/\//-}/deployobject-controller .; \
	done
	cd hack/image && go run . build $(foreach p,$(PLATFORMS),-binary ../../bin/$(subst /,-,$(p))/deployobject-controller) \
		$(IMAGE_META) -out ../../$(IMAGE) -sbom-dir ../../bin

.PHONY: image-push
image-push: ## Build the image and push it, its SBOMs included, to IMG=REGISTRY/REPOSITORY:TAG with the credentials of ~/.docker/config.json.
	@if [[ "$(origin IMG)" == file ]]; then echo "image-push: set IMG=REGISTRY/REPOSITORY:TAG, for example IMG=REGISTRY/deployobject-controller:$(VERSION)" >&2; exit 2; fi
	$(MAKE) --no-print-directory image
	cd hack/image && go run . push -layout ../../$(IMAGE) -tag "$(VERSION)" -to "$(IMG)"

.PHONY: test-image
test-image: image ## Check the image: its platforms, annotations and SBOMs, each image against the Dockerfile (entrypoint, user 65532), and that the binary for this machine prints its version.
	cd hack/image && go test -count=1 ./...
	cd hack/image && go run . check -layout ../../$(IMAGE) -dockerfile ../../Dockerfile -gomod ../../go.mod -require k8s.io/client-go \
		$(foreach p,$(PLATFORMS),-platform $(p)) -sbom-dir ../../bin $(IMAGE_META)
	@if [[ $$(id -u) == 0 ]] && command -v crun >/dev/null && command -v umoci >/dev/null; then \
		hack/image/run-crun.sh $(IMAGE) $(VERSION); \
	else \
		echo "test-image: not run under a container runtime (needs root, and crun and umoci from Debian's packages)"; \
	fi

FUZZTIME ?= 10s
# fuzz-run,TIME: go test -fuzz of every fuzz target under pkg/ for TIME.
fuzz-run = found=0; for pkg in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg | xargs -n1 dirname | sort -u | sed 's|^|./|'); do \
		for target in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			found=1; go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(1) $$pkg || exit 1; \
		done; \
	done; if [[ $$found == 0 ]]; then echo "no fuzz target found" >&2; exit 1; fi

.PHONY: test-fuzz
test-fuzz: ## Run each fuzz target for FUZZTIME (default 10s); seed corpora are in each package's testdata/fuzz.
	@$(call fuzz-run,$(FUZZTIME))

.PHONY: fuzz-build
fuzz-build: ## Build each fuzz target's instrumented test binary and run it once over its seed corpus; make test runs it beside the e2e tests, so that test-fuzz after them fuzzes from the first second.
	@$(call fuzz-run,1x)

.PHONY: test-mutations
test-mutations: ## Mutation testing (gremlins v0.6.0, one worker) of pkg/children, pkg/status, pkg/configrollout, pkg/caches and pkg/canary, one after another; prints killed, lived, not covered, timed out, efficacy and coverage per package. Not in CI.
	hack/mutations.sh

.PHONY: test-e2e
test-e2e: build ## End-to-end tests against a fresh local cluster, removed afterwards.
	hack/e2e.sh

# The oldest Kubernetes release the controller supports, built from
# hack/tools/compat.mod, and the tests run against it: the CRD and its rules,
# the path to Ready, no writes in steady state, the examples, every child,
# the pod surface and the in-cluster RBAC.
COMPAT_TESTS ?= TestCRDAppliesClientSide|TestKubectlExplain|TestInvalidDeployObjectsAreRejected|TestEdgeCasesAreAccepted|TestLargestValidObject|TestCreateReconcilesToReady|TestSteadyStateMakesNoWrites|TestServerCanonicalValuesCauseNoWrites|TestDriftIsReverted|TestKubectlScale|TestKubectlWait|TestExamplesApply|TestDeleteGarbageCollectsChildren|TestDisruptionBudget|TestAutoscaling|TestFiles|TestServiceAccount|TestInClusterUnderDeployRBAC|TestPodSurface|TestRestrictedProfile|TestServiceOptions|TestNetworkPolicy|TestRoutesIngress|TestChildMetadata|TestAutoscalingMetrics|TestCanaryPromotesByRouteWeights
.PHONY: test-compat
test-compat: build ## The e2e tests of COMPAT_TESTS on the oldest supported Kubernetes (its cluster is built once: 26 min on 2 cores). Not in CI.
	CLUSTER_MODFILE=$(CURDIR)/hack/tools/compat.mod E2E_CLUSTER=deployobject-compat hack/e2e.sh -run '^($(COMPAT_TESTS))$$'

.PHONY: test
test: ## End-to-end tests, with the unit tests, GitOps health checks, the monitoring component, the Helm chart, the image and the fuzzers' builds beside them (under nice), then short fuzzing. What CI runs.
	@hack/phases.sh test-e2e test-fuzz --beside test-unit test-gitops test-monitoring test-chart test-image fuzz-build

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
clean: ## Remove build output and release artifacts.
	rm -rf bin dist

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
