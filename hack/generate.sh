#!/usr/bin/env bash
# Generates deepcopy functions and CRDs from the API types of the tree at $1 (default: the project root),
# with bin/controller-gen of the project root. verify-generated.sh runs it on a copy of the tree.
set -euo pipefail
project_root=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$project_root}
controller_gen="$project_root/bin/controller-gen"
cd "$tree"
"$controller_gen" object paths=./pkg/apis/...
"$controller_gen" crd paths=./pkg/apis/extensions/... output:crd:dir=charts/gardener-extension-backup/crds
# The druid.gardener.cloud CRDs are upstream etcd-druid's, byte for byte, from the
# github.com/gardener/etcd-druid/api module go.mod pins (the API types are its types). The task CRDs are the
# variants with CEL rules, which gardenlet installs on Kubernetes >= 1.29 (crds.GetAll of that module). The
# Etcd CRD is upstream's variant without CEL rules (what gardenlet installs on older Kubernetes): the CEL
# variant refuses every decrease of spec.replicas but to 0, and our druid scales a running cluster in
# (member by member, quorum held). Its other rules are enforced by druid's validation webhook and again by
# druid itself (docs/gardenlet.md, "Validation without the webhook").
druid_api_module=$(go list -m -f '{{.Dir}}' github.com/gardener/etcd-druid/api)
rm -f charts/etcd-druid/crds/druid.gardener.cloud_*.yaml
for crd in etcds_without_cel etcdcopybackupstasks etcdopstasks; do
	install -m 0644 "$druid_api_module/core/v1alpha1/crds/druid.gardener.cloud_$crd.yaml" charts/etcd-druid/crds/
done
# The VPA CRDs come from the k8s.io/autoscaler/vertical-pod-autoscaler module that go.mod pins (package vpa).
vpa_module=$(go list -m -f '{{.Dir}}' k8s.io/autoscaler/vertical-pod-autoscaler)
install -m 0644 "$vpa_module/deploy/vpa-v1-crd-gen.yaml" pkg/vpa/crds/vpa-v1-crd-gen.yaml
