package validation_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// joining is validEtcd (TLS on) set to join a one-member source cluster.
func joining() *druidv1alpha1.Etcd {
	return with(validEtcd(), func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
			Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"https://etcd-old-0.etcd-old-peer.ns.svc:2380"}}},
			ClientEndpoints: []string{"https://etcd-old-client.ns.svc:2379"},
		}
	})
}

func TestBootstrapWithExistingClusterRefused(t *testing.T) {
	manyMembers := func(n int) []druidv1alpha1.BootstrapExistingMember {
		var ms []druidv1alpha1.BootstrapExistingMember
		for i := range n {
			ms = append(ms, druidv1alpha1.BootstrapExistingMember{Name: fmt.Sprintf("old-%d", i), PeerURLs: []string{fmt.Sprintf("https://old-%d:2380", i)}})
		}
		return ms
	}
	for name, tc := range map[string]struct {
		mutate func(*druidv1alpha1.BootstrapWithExistingCluster, *druidv1alpha1.Etcd)
		field  string
	}{
		"no members": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) { b.Members = nil },
			"spec.etcd.bootstrapWithExistingCluster.members"},
		"eleven members": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members = manyMembers(11)
		},
			"spec.etcd.bootstrapWithExistingCluster.members"},
		"no peer URLs": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members[0].PeerURLs = nil
		},
			"spec.etcd.bootstrapWithExistingCluster.members[0].peerUrls"},
		"peer URL over http with peer TLS": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members[0].PeerURLs = []string{"http://etcd-old-0:2380"}
		}, "spec.etcd.bootstrapWithExistingCluster.members[0].peerUrls[0]"},
		"peer URL without host": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members[0].PeerURLs = []string{"https://:2380"}
		}, "spec.etcd.bootstrapWithExistingCluster.members[0].peerUrls[0]"},
		"peer URL breaking initial-cluster": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members[0].PeerURLs = []string{"https://a:2380,x=https://b:2380"}
		}, "spec.etcd.bootstrapWithExistingCluster.members[0].peerUrls[0]"},
		"member without name": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) { b.Members[0].Name = "" },
			"spec.etcd.bootstrapWithExistingCluster.members[0].name"},
		"member name with upper case": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members[0].Name = "Old-0"
		},
			"spec.etcd.bootstrapWithExistingCluster.members[0].name"},
		"member name twice": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.Members = append(b.Members, druidv1alpha1.BootstrapExistingMember{Name: b.Members[0].Name, PeerURLs: []string{"https://other:2380"}})
		}, "spec.etcd.bootstrapWithExistingCluster.members[1].name"},
		"member named like a target member": {func(b *druidv1alpha1.BootstrapWithExistingCluster, e *druidv1alpha1.Etcd) {
			b.Members[0].Name = e.Name + "-0"
		},
			"spec.etcd.bootstrapWithExistingCluster.members[0].name"},
		"member named like a prefixed target member": {func(b *druidv1alpha1.BootstrapWithExistingCluster, e *druidv1alpha1.Etcd) {
			e.Spec.MemberNamePrefix = ptr.To("shoot")
			b.Members[0].Name = "shoot-" + e.Name + "-3"
		}, "spec.etcd.bootstrapWithExistingCluster.members[0].name"},
		"no client endpoints": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) { b.ClientEndpoints = nil },
			"spec.etcd.bootstrapWithExistingCluster.clientEndpoints"},
		"client endpoint over http with client TLS": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.ClientEndpoints = []string{"http://etcd-old-client:2379"}
		}, "spec.etcd.bootstrapWithExistingCluster.clientEndpoints[0]"},
		"client endpoint not a URL": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.ClientEndpoints = []string{"etcd-old-client:2379"}
		}, "spec.etcd.bootstrapWithExistingCluster.clientEndpoints[0]"},
		"client endpoint twice": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.ClientEndpoints = append(b.ClientEndpoints, b.ClientEndpoints[0])
		}, "spec.etcd.bootstrapWithExistingCluster.clientEndpoints[1]"},
		"eleven client endpoints": {func(b *druidv1alpha1.BootstrapWithExistingCluster, _ *druidv1alpha1.Etcd) {
			b.ClientEndpoints = nil
			for i := range 11 {
				b.ClientEndpoints = append(b.ClientEndpoints, fmt.Sprintf("https://old-%d:2379", i))
			}
		}, "spec.etcd.bootstrapWithExistingCluster.clientEndpoints"},
	} {
		t.Run(name, func(t *testing.T) {
			e := joining()
			tc.mutate(e.Spec.Etcd.BootstrapWithExistingCluster, e)
			errs := validation.ValidateEtcd(e)
			if len(errs) == 0 {
				t.Fatalf("admitted; want an error on %s", tc.field)
			}
			for _, err := range errs {
				if err.Field != tc.field {
					t.Errorf("error on %s (%v), want only errors on %s", err.Field, err, tc.field)
				}
			}
		})
	}
}

func TestBootstrapWithExistingClusterAdmitted(t *testing.T) {
	for name, e := range map[string]*druidv1alpha1.Etcd{
		"TLS on": joining(),
		"ten members": with(joining(), func(e *druidv1alpha1.Etcd) {
			b := e.Spec.Etcd.BootstrapWithExistingCluster
			for i := 1; i < 10; i++ {
				b.Members = append(b.Members, druidv1alpha1.BootstrapExistingMember{Name: fmt.Sprintf("etcd-old-%d", i), PeerURLs: []string{fmt.Sprintf("https://etcd-old-%d:2380", i)}})
			}
		}),
		"TLS off": with(joining(), func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.PeerUrlTLS, e.Spec.Etcd.ClientUrlTLS = nil, nil
			b := e.Spec.Etcd.BootstrapWithExistingCluster
			b.Members[0].PeerURLs = []string{"http://10.0.0.1:2380"}
			b.ClientEndpoints = []string{"http://10.0.0.1:2379"}
		}),
	} {
		if errs := validation.ValidateEtcd(e); len(errs) > 0 {
			t.Errorf("%s: unexpected errors: %v", name, errs)
		}
	}
}

// TestBootstrapWithExistingClusterIsCreationOnly: added to a running Etcd or changed, the field is
// refused naming it; kept as it is or removed, it is admitted.
func TestBootstrapWithExistingClusterIsCreationOnly(t *testing.T) {
	const fld = "spec.etcd.bootstrapWithExistingCluster"
	for name, tc := range map[string]struct {
		old, new *druidv1alpha1.Etcd
		refused  bool
	}{
		"added on update": {old: validEtcd(), new: joining(), refused: true},
		"changed": {old: joining(), new: with(joining(), func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.BootstrapWithExistingCluster.ClientEndpoints = []string{"https://other-client.ns.svc:2379"}
		}), refused: true},
		"kept":    {old: joining(), new: with(joining(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 5 })},
		"removed": {old: joining(), new: validEtcd()},
	} {
		errs := validation.ValidateEtcdUpdate(tc.new, tc.old)
		switch {
		case tc.refused && (len(errs) != 1 || errs[0].Field != fld):
			t.Errorf("%s: errors %v, want one on %s", name, errs, fld)
		case tc.refused && !strings.Contains(errs[0].Error(), "after creation") && !strings.Contains(errs[0].Error(), "when the Etcd is created"):
			t.Errorf("%s: %v does not say the field is creation-only", name, errs[0])
		case !tc.refused && len(errs) > 0:
			t.Errorf("%s: unexpected errors %v", name, errs)
		}
	}
}
