package decide

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestRollingUpdateAllowed(t *testing.T) {
	backup := druidv1alpha1.ConditionTypeBackupReady
	status := func(conds map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus) druidv1alpha1.EtcdStatus {
		s := druidv1alpha1.EtcdStatus{}
		for t, v := range conds {
			s.Conditions = append(s.Conditions, druidv1alpha1.Condition{Type: t, Status: v, Reason: "R", Message: "m"})
		}
		return s
	}
	running := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(3))}}
	stopped := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(0))}}
	type conds = map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus
	cases := []struct {
		name    string
		status  druidv1alpha1.EtcdStatus
		sts     *appsv1.StatefulSet
		allowed bool
		reason  string
	}{
		{"healthy", status(conds{ready: isTrue, allReady: isTrue, backup: isTrue}), running, true, "healthy"},
		{"nothing reported yet", status(nil), running, true, "healthy"},
		{"a member not ready", status(conds{ready: isTrue, allReady: isFalse, backup: isTrue}), running, false, "AllMembersReady is False"},
		{"backup failing", status(conds{ready: isTrue, allReady: isTrue, backup: isFalse}), running, false, "BackupReady is False"},
		{"quorum lost: rolling may recover", status(conds{ready: isFalse, allReady: isFalse}), running, true, "recover"},
		{"scaled to zero: nothing rolls", status(conds{ready: isTrue, allReady: isFalse}), stopped, true, "no member pod"},
		{"no StatefulSet yet", status(conds{allReady: isFalse}), nil, true, "no member pod"},
		{"hibernating a degraded cluster: NotChecked judges nothing", notChecked(status(conds{ready: isTrue, allReady: isFalse, backup: isFalse})), running, true, "healthy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			allowed, reason := RollingUpdateAllowed(c.status, c.sts)
			NewWithT(t).Expect(allowed).To(Equal(c.allowed))
			NewWithT(t).Expect(reason).To(ContainSubstring(c.reason))
		})
	}
}

// notChecked gives every condition of s reason NotChecked, as the status of a hibernated Etcd has them: the
// status kept from before the hibernation, no longer a judgment of running members.
func notChecked(s druidv1alpha1.EtcdStatus) druidv1alpha1.EtcdStatus {
	for i := range s.Conditions {
		s.Conditions[i].Reason = druidv1alpha1.ReasonNotChecked
	}
	return s
}
