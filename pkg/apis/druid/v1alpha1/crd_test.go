package v1alpha1_test

import (
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/gardener-etcd/gardener-etcd/charts"
)

// The generated Etcd CRD prints the wire reference's columns by default and the last snapshots with
// `kubectl get etcd -o wide` (priority 1), pointing at fields the schema has.
func TestEtcdCRDPrinterColumns(t *testing.T) {
	g := NewWithT(t)
	crds, err := charts.CRDs(charts.EtcdDruid)
	g.Expect(err).NotTo(HaveOccurred())
	var etcd *apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if crd.Name == "etcds.druid.gardener.cloud" {
			etcd = crd
		}
	}
	g.Expect(etcd).NotTo(BeNil())
	g.Expect(etcd.Spec.Versions).To(HaveLen(1))
	version := etcd.Spec.Versions[0]

	type column struct{ Type, JSONPath string }
	byPriority := map[int32]map[string]column{}
	for _, c := range version.AdditionalPrinterColumns {
		if byPriority[c.Priority] == nil {
			byPriority[c.Priority] = map[string]column{}
		}
		byPriority[c.Priority][c.Name] = column{c.Type, c.JSONPath}
	}
	g.Expect(byPriority[0]).To(Equal(map[string]column{
		"Ready":             {"string", `.status.conditions[?(@.type=="Ready")].status`},
		"Quorate":           {"string", `.status.conditions[?(@.type=="Ready")].reason`},
		"All Members Ready": {"string", `.status.conditions[?(@.type=="AllMembersReady")].status`},
		"Backup Ready":      {"string", `.status.conditions[?(@.type=="BackupReady")].status`},
		"Age":               {"date", ".metadata.creationTimestamp"},
	}))
	wide := byPriority[1]
	g.Expect(wide).To(HaveKeyWithValue("Full Snapshot Revision", column{"integer", ".status.lastFullSnapshot.endRevision"}))
	g.Expect(wide).To(HaveKeyWithValue("Last Full Snapshot", column{"date", ".status.lastFullSnapshot.timestamp"}))
	g.Expect(wide).To(HaveKeyWithValue("Delta Snapshot Revision", column{"integer", ".status.lastDeltaSnapshot.endRevision"}))
	g.Expect(wide).To(HaveKeyWithValue("Last Delta Snapshot", column{"date", ".status.lastDeltaSnapshot.timestamp"}))

	status := version.Schema.OpenAPIV3Schema.Properties["status"]
	for _, field := range []string{"lastFullSnapshot", "lastDeltaSnapshot"} {
		snap, ok := status.Properties[field]
		g.Expect(ok).To(BeTrue(), field)
		g.Expect(status.Required).NotTo(ContainElement(field), "an addition is optional")
		g.Expect(snap.Properties["endRevision"].Type).To(Equal("integer"), field)
		g.Expect(snap.Properties["timestamp"].Format).To(Equal("date-time"), field)
		g.Expect(snap.Properties["name"].Type).To(Equal("string"), field)
		g.Expect(snap.Required).To(ConsistOf("endRevision", "timestamp"), "%s: name is optional", field)
	}
}
