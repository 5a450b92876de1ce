package heartbeat

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/kubernetes"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

func TestAlarmAnnotationsAreDruids(t *testing.T) {
	g := NewWithT(t)
	g.Expect(AnnotationAlarms).To(Equal(druidv1alpha1.AlarmsAnnotation))
	g.Expect(AnnotationNoSpaceCannotRecover).To(Equal(druidv1alpha1.NoSpaceCannotRecoverAnnotation))
}

// The lease says which alarms the cluster has: none on a healthy member ("" — the sidecar reports), NOSPACE
// once a write exceeded the quota; and, on the backup leader's lease, why the recovery cannot disarm it
// while it cannot.
func TestLeaseReportsActiveAlarmsAndAnUnrecoverableNoSpace(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "etcd-main-0", Configure: func(c *embed.Config) { c.QuotaBackendBytes = 4 << 20 }})
	emptyLease(t, cs, ns, "etcd-main-0")
	cannotRecover := ""
	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: "etcd-main-0", Etcd: m.Client(t), LocalEndpoint: m.Endpoint(),
		NoSpaceCannotRecover: func() string { return cannotRecover }, Log: testr.New(t)}

	g.Expect(ml.Renew(t.Context())).To(Succeed())
	annotations := getLease(t, cs, ns, "etcd-main-0").Annotations
	g.Expect(annotations).To(HaveKeyWithValue(AnnotationAlarms, ""))
	g.Expect(annotations).NotTo(HaveKey(AnnotationNoSpaceCannotRecover))

	cli := m.Client(t)
	value := strings.Repeat("v", 256<<10)
	for i := 0; ; i++ {
		g.Expect(i).To(BeNumerically("<", 1000), "no NOSPACE after 1000 writes")
		_, err := cli.Put(t.Context(), fmt.Sprintf("key/%d", i%4), value)
		if errors.Is(err, rpctypes.ErrNoSpace) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
	}
	cannotRecover = "live data over the quota after compaction: 4194304 bytes in use"
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	annotations = getLease(t, cs, ns, "etcd-main-0").Annotations
	g.Expect(annotations).To(HaveKeyWithValue(AnnotationAlarms, "NOSPACE"))
	g.Expect(annotations).To(HaveKeyWithValue(AnnotationNoSpaceCannotRecover, cannotRecover))

	cannotRecover = ""
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	g.Expect(getLease(t, cs, ns, "etcd-main-0").Annotations).NotTo(HaveKey(AnnotationNoSpaceCannotRecover))
}
