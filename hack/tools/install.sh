#!/usr/bin/env bash
# Builds the pinned tools (Kubernetes control plane, etcd, versitygw, fake-gcs-server, controller-gen,
# staticcheck, golangci-lint) from the Go module proxy, and installs Azurite from the npm registry, into a version-stamped
# cache outside the clone and links them into bin/.
#
# Each directory under hack/tools is its own Go module pinning one tool set. The cache key is a hash of that
# module's files and the Go version, so a second run only compares stamps and relinks (seconds), and a
# changed pin builds into a new directory instead of overwriting binaries a running test may use.
#
# Azurite (the Azure Blob Storage emulator the ABS tests run against) is a Node.js package: it needs node
# and npm on the PATH. Without them this script says so and goes on; the ABS tests then skip.
#
# Usage: hack/tools/install.sh [tool-module ... | azurite]   (default: all of them)
# Env:   GARDENER_ETCD_TOOLS_CACHE overrides the cache root.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools_dir="$root/hack/tools"
cache_root=${GARDENER_ETCD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-etcd/tools}
bin_dir="$root/bin"
mkdir -p "$cache_root" "$bin_dir"

kube_version=$(awk '{for (i = 1; i < NF; i++) if ($i == "k8s.io/kubernetes") {print $(i + 1); exit}}' "$tools_dir/kube/go.mod")
kube_ldflags="-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/client-go/pkg/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitTreeState=clean"

# packages_of prints the main packages a tools module builds: its `tool` directives, or "." for a module
# that has its own main (etcd).
packages_of() {
	local module_dir=$1
	if [ -f "$module_dir/main.go" ]; then
		echo "."
	else
		awk '/^tool \(/ {block = 1; next} block && /^\)/ {block = 0; next} block {print $1} /^tool [^(]/ {print $2}' "$module_dir/go.mod"
	fi
}

ldflags_of() {
	case "$1" in
	kube) echo "$kube_ldflags" ;;
	*) echo "" ;;
	esac
}

stamp_of() {
	local module_dir=$1
	{
		go env GOVERSION GOOS GOARCH
		ldflags_of "$(basename "$module_dir")"
		cat "$module_dir"/go.mod "$module_dir"/go.sum "$module_dir"/*.go 2>/dev/null || true
	} | sha256sum | cut -c1-16
}

install_module() {
	local name=$1 module_dir="$tools_dir/$1"
	local target="$cache_root/$name-$(stamp_of "$module_dir")"
	if [ ! -f "$target/.complete" ]; then
		echo ">> building $name into $target (first time only)"
		local start=$SECONDS staging="$target.tmp.$$"
		rm -rf "$staging" && mkdir -p "$staging"
		# shellcheck disable=SC2046 # the package list is meant to split
		(cd "$module_dir" && go build -ldflags "$(ldflags_of "$name")" -o "$staging/" $(packages_of "$module_dir"))
		touch "$staging/.complete"
		# A concurrent run may have won the race; keep whichever finished first.
		mv -T "$staging" "$target" 2>/dev/null || rm -rf "$staging"
		echo ">> built $name in $((SECONDS - start))s"
	fi
	local binary
	for binary in "$target"/*; do
		ln -sfn "$binary" "$bin_dir/$(basename "$binary")"
	done
}

# azurite_version pins the Azure Storage emulator; its blob service is linked as bin/azurite-blob.
azurite_version=3.37.0

install_azurite() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo ">> WARNING: node and npm are not on the PATH, so Azurite (the ABS emulator) is not installed and the" >&2
		echo ">> ABS tests will skip. Install Node.js 18 or newer with npm (Debian: apt-get install nodejs npm)." >&2
		rm -f "$bin_dir/azurite-blob"
		return 0
	fi
	local target="$cache_root/azurite-$azurite_version"
	if [ ! -f "$target/.complete" ]; then
		echo ">> installing azurite@$azurite_version into $target (first time only)"
		local start=$SECONDS staging="$target.tmp.$$"
		rm -rf "$staging" && mkdir -p "$staging"
		npm install --prefix "$staging" --no-audit --no-fund --loglevel=error "azurite@$azurite_version"
		touch "$staging/.complete"
		mv -T "$staging" "$target" 2>/dev/null || rm -rf "$staging"
		echo ">> installed azurite in $((SECONDS - start))s"
	fi
	ln -sfn "$target/node_modules/.bin/azurite-blob" "$bin_dir/azurite-blob"
}

modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
	modules=(controller-gen staticcheck golangci-lint etcd kube versitygw fake-gcs-server azurite)
fi

# One build at a time per cache: parallel make targets and CI must not build the same stamp twice.
exec 9>"$cache_root/.lock"
flock 9
for m in "${modules[@]}"; do
	case "$m" in
	azurite) install_azurite ;;
	*) install_module "$m" ;;
	esac
done
