# gardener-etcd — see README.md. Every target runs from a fresh clone; the ones that need the Kubernetes,
# etcd and S3 binaries call `tools` first, which builds them once into ~/.cache/gardener-etcd and links them.
SHELL := /usr/bin/env bash -o pipefail -e
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/gardener-etcd/gardener-etcd/pkg/version.Version=$(VERSION)
# The envtest harness and the tests find the binaries here.
export KUBEBUILDER_ASSETS := $(BIN)
GO_TEST_FLAGS ?= -count=1 -timeout=30m

.PHONY: all
all: build

.PHONY: tools
tools: ## Build (first time only) and link kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, etcd (and the old etcd-3.4, etcd-3.5, etcd-3.6), containerd, runc, CNI plugins, CoreDNS, registry, kube-network-policies, versitygw, MinIO, fake-gcs-server, controller-gen, staticcheck, golangci-lint, promtool and Azurite (npm) into bin/; as root also apt-installs iptables, conntrack and libseccomp-dev.
	@hack/tools/install.sh

.PHONY: tools-upstream
tools-upstream: ## Build (first time only) and link upstream's etcd-druid v0.38.1 and etcd-backup-restore v0.40.0 from their Go modules as bin/upstream-etcd-druid and bin/upstream-etcdbrctl (not needed by `make test`).
	@hack/tools/install.sh upstream-etcd-druid upstream-etcd-backup-restore

.PHONY: generate
generate: tools ## Write deepcopy functions and the extension CRDs from the API types; copy the druid CRDs from upstream's API module (into charts/*/crds).
	@hack/generate.sh "$(CURDIR)"

.PHONY: verify
verify: tools ## Fail when generated files or go.mod/go.sum are stale.
	@hack/verify-generated.sh
	@go mod tidy -diff || (echo "go.mod/go.sum are not tidy: run 'go mod tidy'" >&2; exit 1)

.PHONY: lint
lint: tools ## golangci-lint with the curated set of .golangci.yml (goimports, vet, staticcheck, errcheck, gosec, …), also on the e2e and chaos suites.
	$(BIN)/golangci-lint run --allow-serial-runners ./...
	$(BIN)/golangci-lint run --allow-serial-runners --build-tags e2e ./test/e2e/...
	$(BIN)/golangci-lint run --allow-serial-runners --build-tags chaos ./test/chaos/...

.PHONY: build
build: ## Build every binary of cmd/ into bin/.
	go build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

# The project's OCI images (etcd-druid, etcdbrctl, etcd-wrapper, gardener-extension-backup), built without a
# container engine into OCI layouts under bin/images and tagged with VERSION; the same commit gives the same
# digests (pkg/imagebuild). REGISTRY names them, and is where `make push` sends them.
# PLATFORMS picks the platforms (comma-separated, e.g. linux/arm64, or "host" for this machine's):
# `make images` and `make push` build linux/amd64 and linux/arm64 when it is unset, `make demo` only the
# host's (its seed runs on this machine), which halves the build.
REGISTRY ?= ghcr.io/gardener-etcd
SOURCE_URL ?= https://github.com/gardener-etcd/gardener-etcd
IMAGES_DIR := $(BIN)/images

.PHONY: images
images: ## OCI images of every binary for linux/amd64 and linux/arm64 (PLATFORMS=linux/arm64 or PLATFORMS=host for fewer), non-root, reproducible; prints "<image> sha256:<digest>" per image.
	@SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) go run ./hack/images build --dir $(IMAGES_DIR) --registry $(REGISTRY) \
	  --version $(VERSION) --revision $$(git rev-parse HEAD) --source $(SOURCE_URL) $(if $(PLATFORMS),--platforms '$(PLATFORMS)')

.PHONY: images-upstream
images-upstream: tools-upstream ## OCI images of upstream's etcd-druid and etcd-backup-restore (bin/images/upstream-*), from the binaries of `tools-upstream`, for the host only, tagged with upstream's versions.
	@go run ./hack/images build-upstream --dir $(IMAGES_DIR) --registry $(REGISTRY) --bin-dir $(BIN)

.PHONY: inspect-images
inspect-images: ## Per image of `make images`: platforms, manifest digests, user, entrypoint and OCI labels.
	@go run ./hack/images inspect --dir $(IMAGES_DIR)

.PHONY: push
push: images ## Push the images of `make images` to REGISTRY=<host>/<path> (INSECURE=1 for a plain-HTTP registry); prints each by digest.
	@go run ./hack/images push --dir $(IMAGES_DIR) --registry $(REGISTRY) $(if $(INSECURE),--insecure)

# The demo's images are for this machine only unless PLATFORMS says otherwise (a target-specific value,
# which `images` inherits as demo's prerequisite).
.PHONY: demo
demo: PLATFORMS ?= host
demo: tools build images ## (root) The whole workflow on the local seed with a summary (first run: tens of minutes for `tools`); images for the host only (PLATFORMS=linux/amd64,linux/arm64 for both); DEMO_FLAGS=--keep keeps the seed running, DEMO_FLAGS=-v shows the components' logs.
	$(BIN)/gardener-etcd demo $(DEMO_FLAGS)

.PHONY: e2e
e2e: tools tools-upstream ## (root) End-to-end suite on the local seed's real nodes, with images built from the checkout and of upstream's etcd-druid and etcd-backup-restore (test/e2e, build tag e2e; tens of minutes); E2E_FLAGS adds e.g. -ginkgo.focus=scale-up.
	go test -tags e2e -count=1 -timeout 100m -v ./test/e2e/... -ginkgo.v -ginkgo.no-color $(E2E_FLAGS)

# The recovery benchmark: the e2e specs labelled "recovery" (quorum loss, member pod deleted, member volume
# wiped, member node gone, 1 → 3 with peer TLS, 3 → 1), each under a writer; prints one line per scenario,
# `recovery <scenario>: <seconds> s, acknowledged <n>, lost <m>`. The whole log is kept in BENCH_RECOVERY_LOG.
# E2E_FLAGS narrows it further, e.g. E2E_FLAGS='-ginkgo.focus="quorum loss"'.
BENCH_RECOVERY_LOG ?= /tmp/gardener-etcd-bench-recovery.log

.PHONY: bench-recovery
bench-recovery: tools tools-upstream ## (root) Recovery times under a writer on the local seed (the e2e specs labelled recovery): one line per scenario with the seconds from the fault to the recovered cluster and the acknowledged writes lost (must be 0).
	@echo "bench-recovery: log in $(BENCH_RECOVERY_LOG)"
	@go test -tags e2e -count=1 -timeout 90m -v ./test/e2e/... -ginkgo.v -ginkgo.no-color -ginkgo.label-filter=recovery $(E2E_FLAGS) > $(BENCH_RECOVERY_LOG) 2>&1; \
		rc=$$?; grep -E '^(recovery |SPEC )' $(BENCH_RECOVERY_LOG); exit $$rc

# The chaos suite (test/chaos): rounds of faults on a 3-member etcd under a writer; every
# acknowledged write must survive. CHAOS_SEED replays a run's order; CHAOS_ONLY limits it to some faults; CHAOS_NETWORK_CUT, CHAOS_S3_DOWN,
# CHAOS_DRUID_DOWN, CHAOS_APISERVER_DOWN, CHAOS_STALE_LEASES, CHAOS_FROZEN_SIDECARS, CHAOS_DISK_FULL (Go durations) shorten the long faults.
CHAOS_ROUNDS ?= 30
export CHAOS_ROUNDS CHAOS_SEED CHAOS_ONLY CHAOS_NETWORK_CUT CHAOS_S3_DOWN CHAOS_DRUID_DOWN CHAOS_APISERVER_DOWN CHAOS_STALE_LEASES CHAOS_FROZEN_SIDECARS CHAOS_DISK_FULL

.PHONY: chaos
chaos: tools ## (root) The chaos suite on the local seed: CHAOS_ROUNDS (default 30) rounds of kill -9, network cuts, full disks, store/druid/apiserver outages, stale leases, frozen sidecars and attacks under a writer; prints a table (hours with the full 10-minute outages).
	go test -tags chaos -count=1 -timeout 5h -v -run '^TestChaos$$' ./test/chaos/...

.PHONY: test
test: tools verify lint test-unit-nobin ## Everything CI runs: tools, generated-file and lint checks, unit tests without binaries, unit and integration tests.
	go test $(GO_TEST_FLAGS) ./...

.PHONY: test-unit
test-unit: ## Unit tests only (no binaries needed; integration packages skip themselves under -short).
	go test $(GO_TEST_FLAGS) -short ./...

.PHONY: test-unit-nobin
test-unit-nobin: ## test-unit as on a clone where `make tools` never ran: the tests see an empty bin directory (docs/testing.md).
	@empty=$$(mktemp -d) && trap 'rmdir "$$empty"' EXIT && \
	  env -u VERSITYGW_BIN -u FAKE_GCS_SERVER_BIN -u AZURITE_BLOB_BIN KUBEBUILDER_ASSETS="$$empty" \
	  go test $(GO_TEST_FLAGS) -short ./...

.PHONY: test-integration
test-integration: tools ## Unit and integration tests against the real apiserver, etcd and S3 server.
	go test $(GO_TEST_FLAGS) ./...

# Object stores whose test servers come from the system's packages rather than from `tools`. Each provider
# adds an install script (hack/stores/install-<provider>.sh) and its test pattern here; `make test` runs
# the same tests but skips those whose server is not installed.
STORE_TESTS := TestSwift|TestAllProviders

.PHONY: test-stores
test-stores: tools ## (root, Debian) Install the object-store servers (OpenStack Swift) and run the store tests against them.
	hack/stores/install-swift.sh
	go test $(GO_TEST_FLAGS) -run '$(STORE_TESTS)' ./pkg/backuprestore/snapstore/ ./pkg/backuprestore/storeflags/ ./test/support/backuptest/ ./test/support/swiftserver/

# Benchmarks print their own figures and ratios against a baseline measured in the same run; they generate
# their data when they run and are never part of `make test`. bench-restore and bench-sidecar compare with
# upstream etcd-backup-restore v0.40.0's etcdbrctl from `make tools-upstream`, and fail without it.
BENCH_FLAGS ?= -run '^$$' -benchtime 1x -timeout 60m

.PHONY: bench
bench: bench-restore bench-sidecar bench-druid ## All benchmarks.

# The restore benchmark's workloads (up to 2M revisions written through etcd, minutes each; a second one
# per size from etcd 3.5 for the etcdbrctl binaries) are generated once and kept here;
# BENCH_RESTORE_REVISIONS=20000,200000 picks sizes, BENCH_RESTORE_TXN_MAX the sizes the slow baseline
# runs for. Upstream's restore runs at every size and replays about 1,300 revisions/s, so the default sizes
# take over an hour (BENCH_RESTORE_TIMEOUT, after BENCH_FLAGS' timeout, wins).
BENCH_RESTORE_CACHE ?= $(HOME)/.cache/gardener-etcd/bench-restore
BENCH_RESTORE_TIMEOUT ?= 3h

.PHONY: bench-restore
bench-restore: tools tools-upstream ## Restore of a full snapshot + 20k/200k/2M delta revisions (BENCH_RESTORE_REVISIONS=20000 for one size): rev/s, peak RSS, vs upstream etcd-backup-restore's etcdbrctl restore, one-transaction-per-revision replay and the decompression floor.
	BENCH_RESTORE_CACHE=$(BENCH_RESTORE_CACHE) go test ./pkg/backuprestore/restorer $(BENCH_FLAGS) -timeout $(BENCH_RESTORE_TIMEOUT) -bench BenchmarkRestore

.PHONY: bench-sidecar
bench-sidecar: tools tools-upstream ## Full snapshot of 1 GiB to S3 vs Maintenance.Snapshot to a file and vs upstream etcd-backup-restore's etcdbrctl snapshot; writers' throughput with our and upstream's delta snapshotting, and both sidecars' memory (sizes and rounds: docs/testing.md).
	go test ./test/bench/sidecar $(BENCH_FLAGS) -bench .

.PHONY: bench-druid
bench-druid: tools tools-upstream ## Bursts of 50, 500 and 1,000 Etcds on envtest, ours and upstream etcd-druid v0.38.1 in turn (DRUID_BENCH_SIZES=50,500; repeated sizes such as 50,1000,50,1000 add medians per size): time to all StatefulSets, druid CPU and peak RSS, apiserver+etcd CPU and apiserver requests per Etcd, each as ours/upstream, and each druid's share of the control plane's CPU after taking out what creating the burst costs with no druid.
	go test ./test/bench/druid $(BENCH_FLAGS) -bench BenchmarkEtcdCreationBurst

.PHONY: clean
clean: ## Remove bin/ (the tool cache in ~/.cache/gardener-etcd stays).
	rm -rf $(BIN)

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'
