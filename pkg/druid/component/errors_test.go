package component

import (
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestErrorCodesAreStable(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ErrorCodeFor(OperationSync, KindStatefulSet)).To(Equal(druidv1alpha1.ErrorCode("ERR_SYNC_STATEFULSET")))
	g.Expect(ErrorCodeFor(OperationDelete, KindConfigMap)).To(Equal(druidv1alpha1.ErrorCode("ERR_DELETE_CONFIGMAP")))
	g.Expect(ErrorCodeFor(OperationGet, KindPodDisruptionBudget)).To(Equal(druidv1alpha1.ErrorCode("ERR_GET_POD_DISRUPTION_BUDGET")))
	for _, kind := range SyncOrder {
		g.Expect(string(ErrorCodeFor(OperationSync, kind))).NotTo(HaveSuffix("UNKNOWN"), "kind %s has no code name", kind)
	}
}

func TestWrapErrorKeepsCauseAndCode(t *testing.T) {
	g := NewWithT(t)
	g.Expect(WrapError(nil, OperationSync, KindRole, "x")).To(Succeed())

	cause := apierrors.NewConflict(schema.GroupResource{Resource: "statefulsets"}, "etcd-main", errors.New("stale"))
	err := fmt.Errorf("flow: %w", WrapError(cause, OperationSync, KindStatefulSet, "syncing statefulset %s", "etcd-main"))
	g.Expect(apierrors.IsConflict(err)).To(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring("ERR_SYNC_STATEFULSET: syncing statefulset etcd-main"))

	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	last := AsLastError(err, now)
	g.Expect(last.Code).To(Equal(druidv1alpha1.ErrorCode("ERR_SYNC_STATEFULSET")))
	g.Expect(last.Description).To(Equal(err.Error()))
	g.Expect(last.ObservedAt.Time).To(Equal(now))

	g.Expect(AsLastError(errors.New("plain"), now).Code).To(Equal(ErrorCodeUnknown))
}

func TestRequeueIsDistinctFromFailure(t *testing.T) {
	g := NewWithT(t)
	err := fmt.Errorf("step: %w", Requeue(0, "waiting for %d leases", 2))
	r, ok := IsRequeue(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(r.After).To(Equal(DefaultRequeueAfter))
	g.Expect(r.Reason).To(Equal("waiting for 2 leases"))

	var coded *Error
	g.Expect(errors.As(err, &coded)).To(BeFalse(), "a requeue carries no error code")
	_, ok = IsRequeue(WrapError(errors.New("boom"), OperationSync, KindRole, "x"))
	g.Expect(ok).To(BeFalse())
}

type nopOperator struct{ Operator }

func TestRegistryOrderAndCompleteness(t *testing.T) {
	g := NewWithT(t)
	ops := map[Kind]Operator{}
	for _, k := range SyncOrder {
		ops[k] = nopOperator{}
	}
	r, err := NewRegistry(ops)
	g.Expect(err).NotTo(HaveOccurred())
	kinds := make([]Kind, 0, len(r))
	for _, reg := range r {
		kinds = append(kinds, reg.Kind)
	}
	g.Expect(kinds).To(Equal([]Kind{KindServiceAccount, KindRole, KindRoleBinding, KindMemberLease, KindSnapshotLease,
		KindPodDisruptionBudget, KindNetworkPolicy, KindClientService, KindPeerService, KindConfigMap, KindStatefulSet}))

	delete(ops, KindConfigMap)
	_, err = NewRegistry(ops)
	g.Expect(err).To(MatchError(ContainSubstring("no operator for ConfigMap")))
}
