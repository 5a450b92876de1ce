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

// The generated EtcdOpsTask CRD carries the upstream CRD's names, printer columns, defaults, minimums and
// immutability rules, which clients and stored objects rely on.
func TestEtcdOpsTaskCRD(t *testing.T) {
	g := NewWithT(t)
	crds, err := charts.CRDs(charts.EtcdDruid)
	g.Expect(err).NotTo(HaveOccurred())
	var crd *apiextensionsv1.CustomResourceDefinition
	for _, c := range crds {
		if c.Name == "etcdopstasks.druid.gardener.cloud" {
			crd = c
		}
	}
	g.Expect(crd).NotTo(BeNil())
	g.Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.NamespaceScoped))
	g.Expect(crd.Spec.Names.Kind).To(Equal("EtcdOpsTask"))
	g.Expect(crd.Spec.Names.ShortNames).To(Equal([]string{"eot"}))
	g.Expect(crd.Spec.Versions).To(HaveLen(1))
	version := crd.Spec.Versions[0]
	g.Expect(version.Subresources.Status).NotTo(BeNil())

	type column struct {
		Name, Type, JSONPath string
		Priority             int32
	}
	var columns []column
	for _, c := range version.AdditionalPrinterColumns {
		columns = append(columns, column{c.Name, c.Type, c.JSONPath, c.Priority})
	}
	g.Expect(columns).To(Equal([]column{
		{"State", "string", ".status.state", 0},
		{"Etcd", "string", ".spec.etcdName", 0},
		{"Age", "date", ".metadata.creationTimestamp", 0},
		{"Phase", "string", ".status.lastOperation.type", 1},
		{"TTL", "integer", ".spec.ttlSecondsAfterFinished", 1},
	}))

	spec := version.Schema.OpenAPIV3Schema.Properties["spec"]
	g.Expect(spec.Required).To(ConsistOf("config"))
	ttl := spec.Properties["ttlSecondsAfterFinished"]
	g.Expect(string(ttl.Default.Raw)).To(Equal("3600"))
	g.Expect(*ttl.Minimum).To(BeEquivalentTo(1))
	config := spec.Properties["config"]
	g.Expect(*config.MinProperties).To(BeEquivalentTo(1))
	g.Expect(*config.MaxProperties).To(BeEquivalentTo(1))
	for name, prop := range map[string]apiextensionsv1.JSONSchemaProps{"config": config, "etcdName": spec.Properties["etcdName"], "ttlSecondsAfterFinished": ttl} {
		g.Expect(prop.XValidations).To(ConsistOf(apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: name + " is immutable"}), name)
	}
	snapshot := config.Properties["onDemandSnapshot"]
	g.Expect(snapshot.Required).To(ConsistOf("type"))
	g.Expect(snapshot.Properties["type"].Enum).To(HaveLen(2))
	g.Expect(string(snapshot.Properties["timeoutSecondsDelta"].Default.Raw)).To(Equal("60"))
	g.Expect(*snapshot.Properties["timeoutSecondsDelta"].Minimum).To(BeEquivalentTo(10))
	g.Expect(string(snapshot.Properties["timeoutSecondsFull"].Default.Raw)).To(Equal("480"))
	g.Expect(*snapshot.Properties["timeoutSecondsFull"].Minimum).To(BeEquivalentTo(120))
	g.Expect(snapshot.XValidations).To(HaveLen(1))
	g.Expect(snapshot.XValidations[0].Rule).To(Equal("self.type == 'delta' ? !has(self.isFinal) || self.isFinal == false : true"))

	status := version.Schema.OpenAPIV3Schema.Properties["status"]
	g.Expect(status.Properties).To(HaveKey("startedAt"))
	g.Expect(status.Properties).To(HaveKey("lastTransitionTime"))
	g.Expect(*status.Properties["lastErrors"].MaxItems).To(BeEquivalentTo(10))
	g.Expect(status.Properties["state"].Enum).To(HaveLen(5))
}
