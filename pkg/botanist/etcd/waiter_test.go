package etcd

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func readyEtcd() *druidv1alpha1.Etcd {
	return &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Generation: 4},
		Spec:       druidv1alpha1.EtcdSpec{Replicas: 3},
		Status: druidv1alpha1.EtcdStatus{
			ObservedGeneration: ptr.To[int64](4),
			Ready:              ptr.To(true),
			Conditions:         []druidv1alpha1.Condition{{Type: druidv1alpha1.ConditionTypeAllMembersUpdated, Status: druidv1alpha1.ConditionTrue}},
		},
	}
}

func TestUnready(t *testing.T) {
	cases := map[string]struct {
		mutate func(*druidv1alpha1.Etcd)
		want   []string
	}{
		"ready":             {func(*druidv1alpha1.Etcd) {}, nil},
		"last errors":       {func(e *druidv1alpha1.Etcd) { e.Status.LastErrors = []druidv1alpha1.LastError{{Code: "ERR_X"}} }, []string{"druid reported 1 error(s)"}},
		"never reconciled":  {func(e *druidv1alpha1.Etcd) { e.Status.ObservedGeneration = nil }, []string{"no observedGeneration"}},
		"generation behind": {func(e *druidv1alpha1.Etcd) { e.Generation = 5 }, []string{"observedGeneration 4 is behind generation 5"}},
		"operation annotation": {func(e *druidv1alpha1.Etcd) {
			e.Annotations = map[string]string{"gardener.cloud/operation": "reconcile"}
		}, []string{"gardener.cloud/operation=reconcile is still set"}},
		"not all updated":       {func(e *druidv1alpha1.Etcd) { e.Status.Conditions[0].Status = druidv1alpha1.ConditionFalse }, []string{"AllMembersUpdated is not True"}},
		"no updated condition":  {func(e *druidv1alpha1.Etcd) { e.Status.Conditions = nil }, []string{"AllMembersUpdated is not True"}},
		"not ready":             {func(e *druidv1alpha1.Etcd) { e.Status.Ready = ptr.To(false) }, []string{"status.ready is not true"}},
		"hibernated, not ready": {func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0; e.Status.Ready = nil; e.Status.Conditions = nil }, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := readyEtcd()
			c.mutate(e)
			got := Unready(e)
			if len(got) != len(c.want) {
				t.Fatalf("Unready = %q, want %d reason(s) like %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("reason %d = %q, want it to contain %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestDescribeUnreadyNamesErrorsAndConditions(t *testing.T) {
	e := readyEtcd()
	e.Status.LastErrors = []druidv1alpha1.LastError{{Code: "ERR_SYNC_STATEFULSET", Description: "secret etcd-backup not found"}}
	e.Status.Conditions = append(e.Status.Conditions, druidv1alpha1.Condition{Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionFalse, Reason: "QuorumLost", Message: "1 of 3 members ready"})
	msg := describeUnready(e, Unready(e))
	g := NewWithT(t)
	g.Expect(msg).To(ContainSubstring("waiting for: druid reported 1 error(s)"))
	g.Expect(msg).To(ContainSubstring("last error ERR_SYNC_STATEFULSET: secret etcd-backup not found"))
	g.Expect(msg).To(ContainSubstring("condition Ready=False (QuorumLost: 1 of 3 members ready)"))
	g.Expect(describeUnready(nil, []string{"it does not exist"})).To(Equal("waiting for: it does not exist"))
}

func TestMissingSecretErrorNamesEverySecretAndKey(t *testing.T) {
	err := &MissingSecretError{Namespace: "shoot--a--b", Etcd: "etcd-main", Missing: []MissingSecret{{Name: "ca-etcd"}, {Name: "etcd-backup", Keys: []string{"bucketName"}}}}
	NewWithT(t).Expect(err.Error()).To(Equal("etcd-main not written, retried later: secret shoot--a--b/ca-etcd is missing; secret shoot--a--b/etcd-backup lacks key(s) bucketName"))
}

func TestStorageProviderForEntryType(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]druidv1alpha1.StorageProvider{"local": "Local", "s3": "S3", "aws": "S3", "azure": "ABS", "gcp": "GCS", "openstack": "Swift", "alicloud": "OSS"} {
		g.Expect(StorageProviderForEntryType(in)).To(Equal(want), in)
	}
	_, err := StorageProviderForEntryType("floppy")
	g.Expect(err).To(MatchError(ContainSubstring(`"floppy"`)))
}
