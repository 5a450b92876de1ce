// Package swiftserver runs a real OpenStack Swift on 127.0.0.1 for tests: Debian's Swift packages
// (installed by hack/stores/install-swift.sh) as a single-replica all-in-one cluster with TempAuth (v1
// authentication), which is what runs without Keystone. Each server gets its own temporary directory
// (configuration, rings, object storage) and free ports from test/freeport: a proxy, an account, a container
// and an object server, and the memcached where TempAuth keeps its tokens. Every process is stopped, and
// the directory removed, when the test ends.
//
// Tests skip themselves, naming the reason, when Swift is not installed, under -short (Swift's Python
// servers take several seconds to start), or when the temporary directory's file system lacks the user
// extended attributes the object server stores its metadata in.
package swiftserver
