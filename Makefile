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

# The kube-apiserver and etcd that the integration tests run against (hack/envtest.sh builds
# them). A KUBEBUILDER_ASSETS that is already set is respected.
KUBEBUILDER_ASSETS ?= $(shell hack/envtest.sh --print)
export KUBEBUILDER_ASSETS

# How long each fuzz target runs in `make test` (a smoke run over the seed corpus and a little
# more); run `make fuzz FUZZTIME=5m` for a real session.
FUZZTIME ?= 5s

GO_TEST_FLAGS ?= -count=1

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: ## Build the almanac binary into bin/almanac.
	go build -o bin/almanac .

##@ Generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code and other Go sources.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/autoscaling/... paths=./api/batch/...
	go generate ./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs, RBAC and webhook configurations under config/.
	rm -rf config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/autoscaling/... paths=./api/batch/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=almanac-manager paths=./... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./... output:webhook:artifacts:config=config/webhook

.PHONY: check-generate
check-generate: generate manifests ## Regenerate everything and fail if that changed any file.
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		echo "Generated files are out of date; run 'make generate manifests' and commit:"; \
		git status --porcelain -- api config; git diff --stat -- api config; exit 1; \
	fi

##@ Test

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd for the integration tests (cached; no-op when present).
	hack/envtest.sh >/dev/null

.PHONY: test
test: check-generate lint unit fuzz ## Everything CI checks: generated files, lint, all tests, a short fuzz run.

.PHONY: unit
unit: envtest ## Run all Go tests (pure and against a real kube-apiserver + etcd).
	go test $(GO_TEST_FLAGS) ./...

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME.
	hack/fuzz.sh $(FUZZTIME)

.PHONY: bench
bench: envtest ## Run the benchmarks.
	go test -run='^$$' -bench=. -benchmem ./...

##@ Lint

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

$(CONTROLLER_GEN):
	@echo ">> installing controller-gen $(CONTROLLER_GEN_VERSION)"
	GOBIN=$(dir $@) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

$(GOLANGCI_LINT):
	@echo ">> installing golangci-lint $(GOLANGCI_LINT_VERSION) (a cold build takes a few minutes)"
	GOBIN=$(dir $@) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
