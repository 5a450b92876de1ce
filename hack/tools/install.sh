#!/usr/bin/env bash
# Builds the pinned tools (Kubernetes control plane and node components, etcd, the old etcd servers 3.4, 3.5 and
# 3.6 as bin/etcd-3.4, bin/etcd-3.5 and bin/etcd-3.6 for the version-stepping tests, versitygw, MinIO (for its
# STS: the S3 workload-identity test), fake-gcs-server, controller-gen, staticcheck, golangci-lint, promtool
# (checks and unit-tests the Prometheus rules of the druid chart), and the node runtime: containerd, runc, CNI
# plugins, CoreDNS, the distribution registry and the NetworkPolicy agent kube-network-policies) from the Go
# module proxy, and installs Azurite from the npm registry, into a version-stamped cache outside the clone and
# links them into bin/.
#
# Each directory under hack/tools is its own Go module pinning one tool set. The cache key is a hash of that
# module's files, the Go version and the module's build environment, tags and ldflags, so a second run only
# compares stamps and relinks (seconds), and a changed pin builds into a new directory instead of overwriting
# binaries a running test may use.
#
# A few node tools need Debian packages: runc builds against libseccomp (cgo), kubelet, kube-proxy and the CNI
# portmap/bridge plugins call iptables, conntrack and ip at run time. As root this script installs whichever
# are missing; otherwise it warns and goes on (and skips runc when libseccomp cannot be built against).
#
# Azurite (the Azure Blob Storage emulator the ABS tests run against) is a Node.js package: it needs node
# and npm on the PATH. Without them this script says so and goes on; the ABS tests then skip.
#
# The upstream components, upstream-etcd-druid and upstream-etcd-backup-restore (bin/upstream-etcd-druid and
# bin/upstream-etcdbrctl, built from upstream's released modules with upstream's version ldflags), are no test
# tool of `make test`: they are built only when named (`make tools-upstream`), so the default run stays as fast.
#
# Usage: hack/tools/install.sh [tool-module ... | azurite]   (default: all of them but the upstream components)
# Env:   GARDENER_ETCD_TOOLS_CACHE overrides the cache root; TOOLS_PROGRESS_INTERVAL (seconds, default 60) is
#        how often a long build says it is still running.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools_dir="$root/hack/tools"
cache_root=${GARDENER_ETCD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-etcd/tools}
bin_dir="$root/bin"
mkdir -p "$cache_root" "$bin_dir"

kube_version=$(awk '{for (i = 1; i < NF; i++) if ($i == "k8s.io/kubernetes") {print $(i + 1); exit}}' "$tools_dir/kube/go.mod")
kube_ldflags="-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/client-go/pkg/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitTreeState=clean"

# packages_of prints the main packages a tools module builds: its `tool` directives, or "." for a module
# that has its own main (etcd, etcd-3.4, etcd-3.5, etcd-3.6, kube-network-policies; `go build -o dir/` names
# the binary after the module's last path element, hence bin/etcd-3.5).
packages_of() {
	local module_dir=$1
	if [ -f "$module_dir/main.go" ]; then
		echo "."
	else
		awk '/^tool \(/ {block = 1; next} block && /^\)/ {block = 0; next} block {print $1} /^tool [^(]/ {print $2}' "$module_dir/go.mod"
	fi
}

# version_of prints the version a tools module's go.mod requires of module path $2.
version_of() {
	awk -v path="$2" '{for (i = 1; i < NF; i++) if ($i == path) {print $(i + 1); exit}}' "$1/go.mod"
}

# origin_of prints "<commit> <time>" of the version a tools module's go.mod requires of module path $2, as the
# module proxy recorded them from the tag (the .info file of `go mod download`): what upstream's Makefiles take
# from git. Without that record (another proxy) they read "unknown".
origin_of() {
	local module_dir=$1 path=$2 json info commit time
	json=$(cd "$module_dir" && go mod download -json "$path@$(version_of "$module_dir" "$path")")
	commit=$(echo "$json" | sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)".*/\1/p')
	info=$(echo "$json" | sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p')
	time=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info" 2>/dev/null)
	echo "${commit:-unknown} ${time:-unknown}"
}

# ldflags_of stamps the upstream version into binaries whose version variable is set at link time by the
# upstream Makefiles (a plain `go build` would print "unknown" or a +unknown suffix). runc embeds its VERSION
# file and CoreDNS has a constant, so they need none.
ldflags_of() {
	local module_dir="$tools_dir/$1"
	case "$1" in
	kube) echo "$kube_ldflags" ;;
	containerd)
		local pkg=github.com/containerd/containerd/v2
		echo "-X $pkg/version.Version=$(version_of "$module_dir" "$pkg") -X $pkg/version.Package=$pkg"
		;;
	cni-plugins)
		local pkg=github.com/containernetworking/plugins
		echo "-X $pkg/pkg/utils/buildversion.BuildVersion=$(version_of "$module_dir" "$pkg")"
		;;
	registry)
		local pkg=github.com/distribution/distribution/v3
		echo "-X $pkg/version.version=$(version_of "$module_dir" "$pkg") -X $pkg/version.mainpkg=$pkg"
		;;
	promtool)
		# The Go module of Prometheus 3.x.y is tagged v0.30x.y / v0.3xx.y: minor = last two digits of the middle part.
		local v
		v=$(version_of "$module_dir" github.com/prometheus/prometheus)
		echo "-X github.com/prometheus/common/version.Version=$(echo "$v" | awk -F. '{printf "%d.%d.%s", substr($2, 1, 1), substr($2, 2) + 0, $3}')"
		;;
	minio)
		# MinIO is not tagged as a Go module: the pin is a pseudo-version whose timestamp is the commit time that
		# upstream's buildscripts/gen-ldflags.go turns into Version (RFC 3339) and ReleaseTag; its hash is the
		# short commit id. Without them MinIO reports DEVELOPMENT.GOGET.
		local v ts stamp
		v=$(version_of "$module_dir" github.com/minio/minio)
		ts=$(echo "$v" | awk -F- '{print $2}')
		stamp="${ts:0:4}-${ts:4:2}-${ts:6:2}T${ts:8:2}:${ts:10:2}:${ts:12:2}Z"
		local pkg=github.com/minio/minio/cmd
		echo "-X $pkg.Version=$stamp -X $pkg.ReleaseTag=DEVELOPMENT.${stamp//:/-} -X $pkg.CopyrightYear=${ts:0:4}" \
			"-X $pkg.CommitID=${v##*-} -X $pkg.ShortCommitID=${v##*-}"
		;;
	upstream-etcd-druid)
		# As upstream's hack/ld-flags.sh, with the tag's commit and time for git's and the build's date.
		local pkg=github.com/gardener/etcd-druid/internal/version origin
		origin=$(origin_of "$module_dir" github.com/gardener/etcd-druid)
		echo "-X $pkg.gitVersion=$(version_of "$module_dir" github.com/gardener/etcd-druid) -X $pkg.gitCommit=${origin% *}" \
			"-X $pkg.gitTreeState=clean -X $pkg.buildDate=${origin#* } -X $pkg.programName=etcd-druid"
		;;
	upstream-etcd-backup-restore)
		# As upstream's Makefile: the version and `git rev-parse --short HEAD` of the tag.
		local pkg=github.com/gardener/etcd-backup-restore/pkg/version origin
		origin=$(origin_of "$module_dir" github.com/gardener/etcd-backup-restore)
		echo "-w -X $pkg.Version=$(version_of "$module_dir" github.com/gardener/etcd-backup-restore)" \
			"-X $pkg.GitSHA=$(echo "${origin% *}" | cut -c1-7)"
		;;
	*) echo "" ;;
	esac
}

# env_of prints the build environment of a module. runc needs cgo for libseccomp (and the seccomp tag below);
# the other node tools are built static without cgo so that they do not depend on the host's libc.
# The modules that predate the node tools keep Go's default (empty here, so their stamps did not change).
env_of() {
	case "$1" in
	runc) echo "CGO_ENABLED=1" ;;
	containerd | cni-plugins | registry | coredns | minio | kube-network-policies) echo "CGO_ENABLED=0" ;;
	upstream-etcd-druid | upstream-etcd-backup-restore) echo "CGO_ENABLED=0" ;; # as upstream's images
	*) echo "" ;;
	esac
}

# tags_of prints a module's build tags. containerd leaves out the btrfs (cgo), devmapper and zfs snapshotters:
# the node uses overlayfs, and the others only add code and start-up noise.
tags_of() {
	case "$1" in
	runc) echo "seccomp" ;;
	containerd) echo "no_btrfs no_devmapper no_zfs" ;;
	minio) echo "kqueue" ;; # upstream's Makefile builds with it (it selects macOS's file watcher; no effect on Linux)
	*) echo "" ;;
	esac
}

# os_packages_of prints the Debian packages a module needs to build (libseccomp-dev) or that its binaries
# call at run time (iptables, conntrack, ip).
os_packages_of() {
	case "$1" in
	kube) echo "iptables conntrack iproute2" ;;
	runc) echo "libseccomp-dev gcc libc6-dev pkg-config" ;;
	cni-plugins) echo "iptables iproute2" ;;
	*) echo "" ;;
	esac
}

stamp_of() {
	local module_dir=$1 name
	name=$(basename "$module_dir")
	{
		go env GOVERSION GOOS GOARCH
		ldflags_of "$name"
		# Only printed when set, so that the stamps of the modules without them stay what they were.
		if [ -n "$(env_of "$name")$(tags_of "$name")" ]; then
			echo "env: $(env_of "$name") tags: $(tags_of "$name")"
		fi
		cat "$module_dir"/go.mod "$module_dir"/go.sum "$module_dir"/*.go 2>/dev/null || true
	} | sha256sum | cut -c1-16
}

# ensure_os_packages installs the Debian packages the given modules need and that are missing. Only root can;
# anyone else gets a warning and the build goes on (runc is then skipped if it cannot be built, see
# can_build).
ensure_os_packages() {
	local m pkg missing=()
	for m in "$@"; do
		for pkg in $(os_packages_of "$m"); do
			if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" &&
				[[ " ${missing[*]} " != *" $pkg "* ]]; then
				missing+=("$pkg")
			fi
		done
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		echo ">> WARNING: missing Debian packages: ${missing[*]}. Not root (or no apt-get), so not installing them:" >&2
		echo ">> runc needs libseccomp-dev to build; kubelet, kube-proxy and the CNI plugins need iptables," >&2
		echo ">> conntrack and iproute2 to run. Install them with: apt-get install ${missing[*]}" >&2
		return 0
	fi
	echo ">> installing Debian packages: ${missing[*]}"
	# A failed install (no mirror) must not fail the tools the existing tests need: warn, and let can_build
	# skip what cannot be built.
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null; }; then
		echo ">> WARNING: apt-get could not install ${missing[*]}; going on without them" >&2
	fi
}

# can_build says whether a module's build prerequisites outside Go are there: runc links libseccomp.
can_build() {
	case "$1" in
	runc)
		if ! command -v "${CC:-gcc}" >/dev/null || ! pkg-config --exists libseccomp 2>/dev/null; then
			echo ">> WARNING: skipping runc: it needs a C compiler and libseccomp-dev (apt-get install libseccomp-dev)" >&2
			return 1
		fi
		;;
	esac
	return 0
}

# binary_name_of prints the name of the one binary a module builds when it must not be named after its main
# package: upstream's etcd-druid (package .../cmd) and etcdbrctl (the module root) get names that cannot be
# taken for ours.
binary_name_of() {
	case "$1" in
	upstream-etcd-druid) echo "upstream-etcd-druid" ;;
	upstream-etcd-backup-restore) echo "upstream-etcdbrctl" ;;
	*) echo "" ;;
	esac
}

# target_of prints the cache directory of a module's current stamp.
target_of() {
	echo "$cache_root/$1-$(stamp_of "$tools_dir/$1")"
}

# binaries_of prints the names of the binaries a module builds, for the progress lines.
binaries_of() {
	local module_dir="$tools_dir/$1" pkgs
	pkgs=$(packages_of "$module_dir")
	if [ -n "$(binary_name_of "$1")" ]; then
		binary_name_of "$1"
	elif [ "$pkgs" = "." ]; then
		echo "$1"
	else
		echo "$pkgs" | awk -F/ '{printf "%s%s", (NR > 1 ? ", " : ""), $NF}'
	fi
}

# A cold build takes tens of minutes and go build prints nothing meanwhile: every progress_interval
# seconds a line says what is still being built, so that nobody takes the silence for a hang.
progress_interval=${TOOLS_PROGRESS_INTERVAL:-60}
heartbeat_pid=""

start_heartbeat() {
	local what=$1 start
	start=$(date +%s)
	(
		# sleep's output goes nowhere, so a killed heartbeat leaves nothing holding a pipe to make open.
		while sleep "$progress_interval" >/dev/null 2>&1 </dev/null; do
			echo ">>    still building $what ($(($(date +%s) - start))s so far)"
		done
	) &
	heartbeat_pid=$!
}

stop_heartbeat() {
	if [ -n "$heartbeat_pid" ]; then
		kill "$heartbeat_pid" 2>/dev/null || true
		wait "$heartbeat_pid" 2>/dev/null || true
		heartbeat_pid=""
	fi
}
trap stop_heartbeat EXIT

# build_count and build_total number the builds of this run ("building tool 3/9").
build_count=0
build_total=0

install_module() {
	local name=$1 module_dir="$tools_dir/$1"
	can_build "$name" || return 0
	local target
	target=$(target_of "$name")
	if [ ! -f "$target/.complete" ]; then
		build_count=$((build_count + 1))
		echo ">> building tool $build_count/$build_total: $name ($(binaries_of "$name")) into $target (first time only)"
		local start=$SECONDS staging="$target.tmp.$$"
		rm -rf "$staging" && mkdir -p "$staging"
		start_heartbeat "$name"
		# shellcheck disable=SC2046 # the environment and the package list are meant to split
		(cd "$module_dir" && env $(env_of "$name") go build -tags "$(tags_of "$name")" \
			-ldflags "$(ldflags_of "$name")" -o "$staging/$(binary_name_of "$name")" $(packages_of "$module_dir"))
		stop_heartbeat
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
		build_count=$((build_count + 1))
		echo ">> building tool $build_count/$build_total: azurite@$azurite_version (npm) into $target (first time only)"
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
	modules=(controller-gen staticcheck golangci-lint etcd etcd-3.4 etcd-3.5 etcd-3.6 kube versitygw minio
		fake-gcs-server azurite containerd runc cni-plugins registry coredns kube-network-policies promtool)
fi

# One build at a time per cache: parallel make targets and CI must not build the same stamp twice.
exec 9>"$cache_root/.lock"
flock 9
ensure_os_packages "${modules[@]}"

# Say up front what a first run builds and that it takes a while; a warm cache only relinks (seconds).
pending=()
for m in "${modules[@]}"; do
	case "$m" in
	azurite)
		if command -v npm >/dev/null && [ ! -f "$cache_root/azurite-$azurite_version/.complete" ]; then
			pending+=("$m")
		fi
		;;
	*)
		if can_build "$m" 2>/dev/null && [ ! -f "$(target_of "$m")/.complete" ]; then
			pending+=("$m")
		fi
		;;
	esac
done
build_total=${#pending[@]}
if [ "$build_total" -gt 0 ]; then
	echo ">> building $build_total of ${#modules[@]} tool sets into $cache_root: ${pending[*]}"
	echo ">> (first time only; all of them from a cold cache take tens of minutes, a line every ${progress_interval}s shows progress; later runs relink in seconds)"
fi

for m in "${modules[@]}"; do
	case "$m" in
	azurite) install_azurite ;;
	*) install_module "$m" ;;
	esac
done
