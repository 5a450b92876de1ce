#!/usr/bin/env bash
# Fails when the committed deepcopy functions or CRDs differ from what `make generate` writes. It generates
# into a copy of the tree, so it never changes the working tree it checks.
set -euo pipefail
project_root=$(cd "$(dirname "$0")/.." && pwd)
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cd "$project_root"
git ls-files --cached --others --exclude-standard -z | xargs -0 cp --parents -t "$copy" 2>/dev/null || true
"$project_root/hack/generate.sh" "$copy"
stale=0
for dir in pkg/apis charts/etcd-druid/crds charts/gardener-extension-backup/crds pkg/vpa/crds; do
	if ! diff -r -q "$project_root/$dir" "$copy/$dir" >/dev/null; then
		diff -r "$project_root/$dir" "$copy/$dir" | head -40 >&2
		stale=1
	fi
done
if [ "$stale" -ne 0 ]; then
	echo "generated files are stale: run 'make generate' and commit the result" >&2
	exit 1
fi
echo "generated files are up to date"
