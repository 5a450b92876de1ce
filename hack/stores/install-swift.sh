#!/usr/bin/env bash
# Installs Debian's OpenStack Swift servers (proxy, account, container, object) and memcached (TempAuth
# keeps its tokens there) for the Swift tests (test/support/swiftserver). Idempotent: does nothing when the binaries are already there. The tests start their
# own all-in-one server on loopback from a temporary directory; the services the packages register are
# never started (policy-rc.d denies it during the installation) and not needed.
#
# Usage: hack/stores/install-swift.sh   (as root, on Debian or Ubuntu)
set -euo pipefail

binaries=(swift-proxy-server swift-account-server swift-container-server swift-object-server swift-ring-builder memcached)
packages=(swift swift-proxy swift-account swift-container swift-object memcached)

missing=()
for b in "${binaries[@]}"; do
	command -v "$b" >/dev/null 2>&1 || missing+=("$b")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "swift: already installed ($(dpkg-query -W -f='${Version}' swift-proxy 2>/dev/null || echo unknown version))"
	exit 0
fi
echo "swift: missing ${missing[*]}; installing ${packages[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
	echo "swift: apt-get not found; install OpenStack Swift (${packages[*]}) with your system's package manager" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	sudo=(sudo)
fi

# Keep the packages' init scripts from starting system-wide Swift services: the tests run their own.
policy=/usr/sbin/policy-rc.d
created_policy=false
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 755 "$policy"
	created_policy=true
fi
cleanup() {
	if $created_policy; then
		"${sudo[@]}" rm -f "$policy"
	fi
}
trap cleanup EXIT

apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${packages[@]}"

for b in "${binaries[@]}"; do
	command -v "$b" >/dev/null 2>&1 || { echo "swift: $b still missing after the installation" >&2; exit 1; }
done
echo "swift: installed $(dpkg-query -W -f='${Version}' swift-proxy)"
