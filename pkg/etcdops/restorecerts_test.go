package etcdops

import (
	"slices"
	"testing"
)

// Only where the old Etcd's name names the Etcd (the first label after an optional wildcard, the name or
// the name and a dash) is it replaced; a longer name that merely begins with it, the namespace and other
// names stay.
func TestRenamedDNSNamesReplaceOnlyTheEtcdsName(t *testing.T) {
	got := renamedDNSNames([]string{
		"etcd-main-local", "etcd-main", "etcd-main-client.shoot--a.svc", "*.etcd-main-peer.shoot--a.svc.cluster.local",
		"etcd-mainframe.shoot--a", "localhost", "etcd-main.etcd-main-ns", "api.etcd-main-client",
	}, "etcd-main", "etcd-main-restored")
	want := []string{
		"etcd-main-restored-local", "etcd-main-restored", "etcd-main-restored-client.shoot--a.svc", "*.etcd-main-restored-peer.shoot--a.svc.cluster.local",
		"etcd-mainframe.shoot--a", "localhost", "etcd-main-restored.etcd-main-ns", "api.etcd-main-client",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}
