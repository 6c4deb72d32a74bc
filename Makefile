# almanac — run `make help` for the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

# Pinned tool versions. Tools are installed from the Go module proxy into a cache outside the
# clone, one folder per version, so a second clone or a second run installs nothing.
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
ALMANAC_CACHE_DIR      ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/almanac
export ALMANAC_CACHE_DIR
TOOLS_DIR              := $(ALMANAC_CACHE_DIR)/tools
CONTROLLER_GEN         := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen
GOLANGCI_LINT          := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
# Helm 4 for the chart's tests (lint, template, install against the test API server); the
# tests find it through HELM.
HELM_VERSION           ?= v4.3.1
HELM                   := $(TOOLS_DIR)/helm-$(HELM_VERSION)/helm
export HELM
# promtool, from Prometheus's own module, for the alerting rules' tests (test/monitoring:
# `promtool check rules` and `promtool test rules` on the chart's rendered PrometheusRule);
# the tests find it through PROMTOOL. Module v0.316.0 is Prometheus v3.16.0.
PROMTOOL_VERSION       ?= v0.316.0
PROMTOOL               := $(TOOLS_DIR)/promtool-$(PROMTOOL_VERSION)/promtool
export PROMTOOL

# The kube-apiserver and etcd that the integration tests run against (hack/envtest.sh builds
# them). A KUBEBUILDER_ASSETS that is already set is respected.
KUBEBUILDER_ASSETS ?= $(shell hack/envtest.sh --print)
export KUBEBUILDER_ASSETS

# How long each fuzz target runs in `make test` (a smoke run over the seed corpus and a little
# more); run `make fuzz FUZZTIME=5m` for a real session.
FUZZTIME ?= 5s

GO_TEST_FLAGS ?= -count=1

# The container image (`make image`, `make image-push`): what the chart's default
# image.repository and tag name, and what a release publishes.
VERSION           ?= $(shell awk '/^appVersion:/ { gsub(/"/, "", $$2); print $$2 }' charts/almanac/Chart.yaml)
IMAGE_REGISTRY    ?= ghcr.io/almanac-dev
IMAGE_REPOSITORY  ?= $(IMAGE_REGISTRY)/almanac
IMAGE_PLATFORMS   ?= linux/amd64,linux/arm64
IMAGE_ARCHIVE     ?= dist/almanac-image.tar
# The revision label (a commit, "-dirty" when tracked files differ from it) and every
# timestamp in the image (the commit's time): the same source gives the same digest.
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_FLAGS        = --root ../.. --repository $(IMAGE_REPOSITORY) --version $(VERSION) --revision $(REVISION) \
                     --created $(SOURCE_DATE_EPOCH) --platforms $(IMAGE_PLATFORMS)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: ## Build the almanac binary into bin/almanac.
	go build -o bin/almanac .

.PHONY: image
image: ## Build the container image with ko (no Docker) into IMAGE_ARCHIVE, an OCI archive.
	cd hack/image && go run . $(IMAGE_FLAGS) --oci-archive $(abspath $(IMAGE_ARCHIVE))

# A release (`make release`, docs/release.md): the CLI for CLI_PLATFORMS, the chart, the image
# and its SBOM, the krew manifest and checksums, in RELEASE_DIR.
RELEASE_DIR   ?= dist/release
CLI_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64
IMAGE_SBOM_DIR = dist/image-sbom

.PHONY: release
release: $(HELM) ## Package a release into RELEASE_DIR: CLI archives, krew manifest, chart, image archive and SBOM, checksums.txt.
	rm -rf $(IMAGE_SBOM_DIR)
	cd hack/image && go run . $(IMAGE_FLAGS) --oci-archive $(abspath $(IMAGE_ARCHIVE)) --sbom-dir $(abspath $(IMAGE_SBOM_DIR))
	cd hack/release && go run . --root ../.. --out $(abspath $(RELEASE_DIR)) --version $(VERSION) --revision $(REVISION) \
		--created $(SOURCE_DATE_EPOCH) --platforms $(CLI_PLATFORMS) --helm $(HELM) \
		--image-archive $(abspath $(IMAGE_ARCHIVE)) --sbom-dir $(abspath $(IMAGE_SBOM_DIR))
	cd $(RELEASE_DIR) && sha256sum -c --quiet checksums.txt

.PHONY: image-push
image-push: ## Build the image and push it to IMAGE_REPOSITORY:VERSION (set IMAGE_REGISTRY).
	cd hack/image && go run . $(IMAGE_FLAGS) --push

##@ Generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code and other Go sources.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/autoscaling/... paths=./api/batch/... paths=./api/calendar/... paths=./api/sleep/...
	go generate ./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs, RBAC and webhook configurations under config/.
	rm -rf config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/autoscaling/... paths=./api/batch/... paths=./api/calendar/... paths=./api/sleep/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=almanac-manager paths=./... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./... output:webhook:artifacts:config=config/webhook

.PHONY: schemas
schemas: ## Write kubeconform's JSON schemas of the CRDs to config/schemas (after `make manifests`).
	go run ./hack/schemas

.PHONY: schemas-check
schemas-check: ## Fail when config/schemas differs from the CRDs in config/crd/bases.
	go test -count=1 -run '^TestSchemasMatchCRDs$$' ./hack/schemas

.PHONY: check-generate
check-generate: generate manifests schemas chart-check ## Regenerate everything and fail if that changed any file.
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		echo "Generated files are out of date; run 'make generate manifests schemas' and commit:"; \
		git status --porcelain -- api config; git diff --stat -- api config; exit 1; \
	fi

##@ Test

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd for the integration tests (cached; no-op when present).
	hack/envtest.sh >/dev/null

.PHONY: test
test: check-generate lint unit monitoring-test release-test fuzz e2e ## Everything CI checks: generated files, lint, all tests, a short fuzz run, end to end.

.PHONY: release-test
release-test: $(HELM) ## Test the release packaging (hack/release, its own module) on a fake checkout, with krew and Helm.
	cd hack/release && go test $(GO_TEST_FLAGS) ./...

.PHONY: unit
unit: envtest $(HELM) ## Run all Go tests (pure and against a real kube-apiserver + etcd).
	go test $(GO_TEST_FLAGS) ./...

.PHONY: e2e
e2e: image $(HELM) ## End to end, as root: the image on a real single-node cluster (hack/cluster.sh), installed by Helm.
	hack/envtest.sh --cluster >/dev/null
	hack/keda-image.sh >/dev/null
	ALMANAC_KEDA_ARCHIVE=$$(hack/keda-image.sh --print) ALMANAC_IMAGE_ARCHIVE=$(abspath $(IMAGE_ARCHIVE)) go test -tags e2e $(GO_TEST_FLAGS) -parallel 4 -timeout 45m -v ./test/e2e/

.PHONY: cluster-up
cluster-up: image ## Start the single-node cluster (as root) with the image imported; then eval "$$(hack/cluster.sh env)".
	hack/cluster.sh up $(abspath $(IMAGE_ARCHIVE))

.PHONY: cluster-down
cluster-down: ## Stop the single-node cluster and restore the machine.
	hack/cluster.sh down

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME.
	hack/fuzz.sh $(FUZZTIME)

.PHONY: bench
bench: envtest-kcm $(HELM) ## The side-by-side benchmarks (test/bench) at default sizes and the ablation of the ordering of an instant's writes (3 runs of each configuration), and the noisy neighbour with and without the chart's API Priority and Fairness objects, in one run, as one table (docs/performance.md); about 80 minutes.
	go test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 150m ./test/bench

.PHONY: bench-noisy
bench-noisy: envtest $(HELM) ## The noisy-neighbour figure alone (BenchmarkNoisyNeighbour, also part of `make bench`): a boundary while other tenants flood a small API server, with and without the chart's API Priority and Fairness objects, 3 runs of each (docs/performance.md); about 5 minutes.
	go test -count=1 -run '^$$' -bench NoisyNeighbour -benchtime 1x -timeout 30m ./test/bench

.PHONY: bench-components
bench-components: envtest ## The in-process benchmarks of single components (reconciler lag on a fake clock, webhook handlers).
	go test -count=1 -run '^$$' -bench . -benchmem -timeout 60m ./test/scaling ./test/jobs ./test/webhooks ./test/install

.PHONY: envtest-kcm
envtest-kcm: ## Also build kube-controller-manager (the CronJob controller that `make bench` compares with).
	hack/envtest.sh --with-kcm >/dev/null

##@ Chart and demo

.PHONY: chart
chart: ## Regenerate the chart's templates that mirror config/ and the Artifact Hub annotations of Chart.yaml (after `make manifests`).
	go run ./hack/chartgen

.PHONY: chart-check
chart-check: ## Fail when the chart's generated templates or Chart.yaml's Artifact Hub annotations differ from config/ and examples/.
	go test -count=1 -run '^(TestChartMatchesConfig|TestArtifactHubAnnotations)$$' ./hack/chartgen

.PHONY: chart-lint
chart-lint: $(HELM) ## Lint the chart in each certificate mode.
	$(HELM) lint charts/almanac
	$(HELM) lint charts/almanac --set certificates.mode=cert-manager
	$(HELM) lint charts/almanac --set certificates.mode=external,certificates.external.secretName=tls --set-file certificates.external.caBundle=test/install/testdata/external-ca.crt

.PHONY: chart-test
chart-test: envtest $(HELM) $(PROMTOOL) ## Run the chart, certificate, RBAC, `almanac check`, alert and dashboard tests.
	go test $(GO_TEST_FLAGS) ./hack/chartgen ./certs/... ./commands/check ./test/install ./test/rbac
	cd test/monitoring && go test $(GO_TEST_FLAGS) ./...

.PHONY: argocd
argocd: ## Regenerate hack/argocd/argocd-cm.yaml from the Argo CD health checks and actions, then test them (docs/gitops.md).
	go test -count=1 -run '^TestConfigMap$$' ./hack/argocd -update
	go test $(GO_TEST_FLAGS) ./hack/argocd

.PHONY: helm
helm: $(HELM) ## Install the pinned Helm CLI into the tools cache.

.PHONY: promtool
promtool: $(PROMTOOL) ## Build the pinned promtool into the tools cache.

.PHONY: monitoring-test
monitoring-test: envtest $(HELM) $(PROMTOOL) ## Run the alerting rules' promtool tests, the dashboard's checks and the scrape of a running manager (test/monitoring, its own module).
	cd test/monitoring && go test $(GO_TEST_FLAGS) ./...

.PHONY: demo
demo: envtest build ## Run almanac on a local kube-apiserver with the examples, until Ctrl-C.
	go build -o bin/almanac-demo ./hack/demo
	bin/almanac-demo

##@ Lint

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...

$(CONTROLLER_GEN):
	@echo ">> installing controller-gen $(CONTROLLER_GEN_VERSION)"
	GOBIN=$(dir $@) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

$(HELM):
	@echo ">> installing helm $(HELM_VERSION) (a cold build takes a few minutes)"
	GOBIN=$(dir $@) go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)

# go install from the module proxy, as for the other tools (Prometheus's go.mod has no replace
# directive that would stop it; were one added, build in the module's folder of the module
# cache instead, as hack/keda-image.sh does). A cold build takes a few minutes.
$(PROMTOOL):
	@echo ">> installing promtool $(PROMTOOL_VERSION) (a cold build takes a few minutes)"
	GOBIN=$(dir $@) go install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

$(GOLANGCI_LINT):
	@echo ">> installing golangci-lint $(GOLANGCI_LINT_VERSION) (a cold build takes a few minutes)"
	GOBIN=$(dir $@) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
