package sidecar

import (
	"slices"
	"testing"
)

// Only the Etcd's own client Service is taken for the initializer's shortcut, wherever druid put it; the
// client endpoints of a cluster the Etcd joined never are.
func TestOwnServiceIsPickedByName(t *testing.T) {
	const own = "https://etcd-main-client.shoot--p--s.svc:2379"
	source := "https://etcd-old-client.shoot--p--s.svc:2379"
	for _, c := range []struct {
		endpoints []string
		owner     string
		want      []string
	}{
		{[]string{own, source}, "shoot--p--s/etcd-main", []string{own}},
		{[]string{source, own}, "shoot--p--s/etcd-main", []string{own}},
		{[]string{"https://etcd-main-client.shoot--p--s.svc.cluster.local:2379"}, "shoot--p--s/etcd-main", []string{"https://etcd-main-client.shoot--p--s.svc.cluster.local:2379"}},
		{[]string{source, "http://127.0.0.1:2379"}, "shoot--p--s/etcd-main", nil},
		{[]string{"https://etcd-main-client.other.svc:2379"}, "shoot--p--s/etcd-main", nil},
		{[]string{own}, "", nil},
	} {
		if got := ownService(c.endpoints, c.owner); !slices.Equal(got, c.want) {
			t.Errorf("ownService(%v, %q) = %v, want %v", c.endpoints, c.owner, got, c.want)
		}
	}
}
