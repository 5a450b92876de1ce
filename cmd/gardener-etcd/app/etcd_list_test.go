package app

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

// listFixture is a namespace with a ready, suspended three-member etcd-main with both snapshot leases and an
// unreconciled, unprotected etcd-events, and a second namespace with one more Etcd.
type listFixture struct {
	namespace, other, kubeconfig string
}

func newListFixture(t *testing.T) listFixture {
	env := apiserver(t)
	f := listFixture{namespace: env.CreateNamespace(t), other: env.CreateNamespace(t), kubeconfig: kubeconfigFor(t, env, "")}
	createEtcd(t, env, f.namespace, "etcd-main", 3, map[string]string{druidv1alpha1.SuspendEtcdSpecReconcileAnnotation: "repairing member 2 by hand"},
		druidv1alpha1.EtcdStatus{
			ReadyReplicas: 3, Replicas: 3,
			Conditions: []druidv1alpha1.Condition{
				condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonQuorate),
				condition(druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonBackupFailed),
			},
			Members: []druidv1alpha1.EtcdMemberStatus{
				member("etcd-main-0", "6f1c5a0bd2e33a11", druidv1alpha1.EtcdRoleLeader, druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.MemberReasonLeaseSucceeded),
				member("etcd-main-1", "1b9e2f7c00a4d5e2", druidv1alpha1.EtcdRoleMember, druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.MemberReasonLeaseSucceeded),
				member("etcd-main-2", "9a8b7c6d5e4f3a21", druidv1alpha1.EtcdRoleMember, druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.MemberReasonLeaseExpired),
			},
		})
	createSnapshotLease(t, env, f.namespace, "etcd-main-full-snap", "100", time.Now().Add(-5*time.Hour), nil)
	createSnapshotLease(t, env, f.namespace, "etcd-main-delta-snap", "150", time.Now().Add(-5*time.Hour),
		map[string]string{"snapshot.etcd.gardener.cloud/name": "Incr-00000101-00000150-1700000000.gz"})
	createEtcd(t, env, f.namespace, "etcd-events", 1, map[string]string{druidv1alpha1.DisableEtcdComponentProtectionAnnotation: "moving the PVC"}, druidv1alpha1.EtcdStatus{})
	createEtcd(t, env, f.other, "etcd-other", 1, nil, druidv1alpha1.EtcdStatus{
		ReadyReplicas: 0,
		Conditions:    []druidv1alpha1.Condition{condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost)},
	})
	return f
}

func TestEtcdListPrintsTheStatusTable(t *testing.T) {
	f := newListFixture(t)
	g := NewWithT(t)

	out, _, err := run(t, "etcd", "list", "-n", f.namespace, "--kubeconfig", f.kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`(?m)^NAME\s+REPLICAS\s+READY\s+REASON\s+LAST FULL SNAPSHOT\s+LAST DELTA SNAPSHOT\s+SUSPENDED\s+PROTECTED$`))
	g.Expect(out).To(MatchRegexp(tableRow("etcd-events", "0/1", "-", "-", "-", "-", "false", "false").String()))
	g.Expect(out).To(MatchRegexp(tableRow("etcd-main", "3/3", "True", "Quorate", `100 \(5h\S* ago\)`, `150 \(5h\S* ago\)`, "true", "true").String()))
	g.Expect(out).NotTo(ContainSubstring("etcd-other"))

	_, _, err = run(t, "etcd", "list", "-n", f.namespace, "--kubeconfig", f.kubeconfig, "-o", "wide")
	g.Expect(err).To(MatchError(`--output must be table, json or yaml, not "wide"`))
}

func TestEtcdListJSONAndYAMLCarryTheReasonsAndSnapshots(t *testing.T) {
	f := newListFixture(t)
	g := NewWithT(t)

	for _, format := range []string{"json", "yaml"} {
		out, _, err := run(t, "etcd", "list", "--namespace", f.namespace, "--kubeconfig", f.kubeconfig, "-o", format)
		g.Expect(err).NotTo(HaveOccurred())
		var got []etcdops.Summary
		if format == "json" {
			g.Expect(json.Unmarshal([]byte(out), &got)).To(Succeed())
		} else {
			g.Expect(yaml.UnmarshalStrict([]byte(out), &got)).To(Succeed())
		}
		g.Expect(got).To(HaveLen(2), format)
		events, main := got[0], got[1]
		g.Expect(events.Name).To(Equal("etcd-events"))
		g.Expect(events.Ready).To(BeNil())
		g.Expect(events.ComponentProtectionDisabled).To(HaveValue(Equal("moving the PVC")))
		g.Expect(events.SpecReconcileSuspended).To(BeNil())
		g.Expect(events.LastFullSnapshot).To(BeNil())

		g.Expect(main.Namespace).To(Equal(f.namespace))
		g.Expect(main.Replicas).To(Equal(int32(3)))
		g.Expect(main.ReadyReplicas).To(Equal(int32(3)))
		g.Expect(main.Ready).To(HaveValue(Equal(etcdops.ConditionSummary{Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionTrue,
			Reason: druidv1alpha1.ReasonQuorate, Message: druidv1alpha1.ReasonQuorate})))
		g.Expect(main.Conditions).To(HaveLen(2))
		g.Expect(main.Conditions[1].Status).To(Equal(druidv1alpha1.ConditionFalse))
		g.Expect(main.SpecReconcileSuspended).To(HaveValue(Equal("repairing member 2 by hand")))
		g.Expect(main.ComponentProtectionDisabled).To(BeNil())
		g.Expect(main.LastFullSnapshot).NotTo(BeNil())
		g.Expect(main.LastFullSnapshot.Revision).To(Equal(int64(100)))
		g.Expect(main.LastFullSnapshot.Name).To(BeNil())
		g.Expect(main.LastDeltaSnapshot).NotTo(BeNil())
		g.Expect(main.LastDeltaSnapshot.Revision).To(Equal(int64(150)))
		g.Expect(main.LastDeltaSnapshot.Name).To(HaveValue(Equal("Incr-00000101-00000150-1700000000.gz")))
		g.Expect(time.Since(main.LastDeltaSnapshot.Time.Time)).To(BeNumerically(">", 299*time.Minute))
	}
}

func TestEtcdListAllNamespacesAndTheKubeconfigsNamespace(t *testing.T) {
	f := newListFixture(t)
	g := NewWithT(t)

	out, _, err := run(t, "etcd", "list", "-A", "--kubeconfig", f.kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`(?m)^NAMESPACE\s+NAME\s+REPLICAS\s+READY\s+REASON\s+`))
	g.Expect(out).To(MatchRegexp(tableRow(f.namespace, "etcd-events", "0/1", "-", "-", "-", "-", "false", "false").String()))
	g.Expect(out).To(MatchRegexp(tableRow(f.other, "etcd-other", "0/1", "False", "QuorumLost", "-", "-", "false", "true").String()))

	// Without -n and --kubeconfig: $KUBECONFIG, and the namespace of its current context, as with kubectl.
	t.Setenv("KUBECONFIG", kubeconfigFor(t, apiserver(t), f.other))
	out, _, err = run(t, "etcd", "list")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(tableRow("etcd-other", "0/1", "False", "QuorumLost", "-", "-", "false", "true").String()))
	g.Expect(out).NotTo(ContainSubstring("etcd-main"))

	empty := apiserver(t).CreateNamespace(t)
	out, _, err = run(t, "etcd", "list", "-n", empty)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("No Etcds in namespace " + empty + ".\n"))
	out, _, err = run(t, "etcd", "list", "-n", empty, "-o", "json")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("[]\n"))
}

func TestEtcdMembersFromTheStatus(t *testing.T) {
	f := newListFixture(t)
	g := NewWithT(t)
	common := []string{"-n", f.namespace, "--kubeconfig", f.kubeconfig}

	out, _, err := run(t, append([]string{"etcd", "members", "etcd-main"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`(?m)^NAME\s+ID\s+ROLE\s+STATUS\s+REASON\s+SINCE$`))
	g.Expect(out).To(MatchRegexp(tableRow("etcd-main-0", "6f1c5a0bd2e33a11", "Leader", "Ready", "LeaseSucceeded", `3h\S*`).String()))
	g.Expect(out).To(MatchRegexp(tableRow("etcd-main-1", "1b9e2f7c00a4d5e2", "Member", "Ready", "LeaseSucceeded", `3h\S*`).String()))
	g.Expect(out).To(MatchRegexp(tableRow("etcd-main-2", "9a8b7c6d5e4f3a21", "Member", "NotReady", "LeaseExpired", `3h\S*`).String()))
	g.Expect(out).NotTo(ContainSubstring("REVISION"), "druid records no member revision: the column is left out, not invented")

	out, _, err = run(t, append([]string{"etcd", "members", "etcd-main", "-o", "json"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	var members []druidv1alpha1.EtcdMemberStatus
	g.Expect(json.Unmarshal([]byte(out), &members)).To(Succeed())
	g.Expect(members).To(HaveLen(3))
	g.Expect(members[2].Name).To(Equal("etcd-main-2"))
	g.Expect(members[2].ID).To(HaveValue(Equal("9a8b7c6d5e4f3a21")))
	g.Expect(members[2].Status).To(Equal(druidv1alpha1.EtcdMemberStatusNotReady))

	out, _, err = run(t, append([]string{"etcd", "members", "etcd-events"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("No members in the status of Etcd etcd-events in namespace " + f.namespace + " (druid has not recorded any).\n"))

	_, _, err = run(t, append([]string{"etcd", "members", "etcd-nope"}, common...)...)
	g.Expect(err).To(MatchError("no Etcd etcd-nope in namespace " + f.namespace))
}
