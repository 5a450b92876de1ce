package operation

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

const finalizer = extensionsv1alpha1.BackupEntryFinalizer

func reconciledEntry() *extensionsv1alpha1.BackupEntry {
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "e", Generation: 3, Finalizers: []string{finalizer}}}
	SetSucceeded(&be.Status.DefaultStatus, extensionsv1alpha1.LastOperationTypeCreate, "done", 3, time.Now())
	return be
}

func TestNeedsReconcileOnlyForAReason(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NeedsReconcile(reconciledEntry(), &reconciledEntry().Status.DefaultStatus, finalizer)).To(BeFalse())

	newGeneration := reconciledEntry()
	newGeneration.Generation = 4
	annotated := reconciledEntry()
	annotated.Annotations = map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationReconcile}
	failed := reconciledEntry()
	SetError(&failed.Status.DefaultStatus, extensionsv1alpha1.LastOperationTypeReconcile, errors.New("boom"), time.Now())
	noFinalizer := reconciledEntry()
	noFinalizer.Finalizers = nil
	for name, be := range map[string]*extensionsv1alpha1.BackupEntry{
		"generation": newGeneration, "annotation": annotated, "failed": failed, "finalizer": noFinalizer,
		"new": {ObjectMeta: metav1.ObjectMeta{Name: "n"}},
	} {
		g.Expect(NeedsReconcile(be, &be.Status.DefaultStatus, finalizer)).To(BeTrue(), name)
	}
}

func TestOperationTypeStaysCreateUntilTheFirstSuccess(t *testing.T) {
	g := NewWithT(t)
	status := &extensionsv1alpha1.DefaultStatus{}
	obj := &extensionsv1alpha1.BackupEntry{}
	g.Expect(Type(obj, status)).To(Equal(extensionsv1alpha1.LastOperationTypeCreate))
	SetError(status, extensionsv1alpha1.LastOperationTypeCreate, errors.New("boom"), time.Now())
	g.Expect(Type(obj, status)).To(Equal(extensionsv1alpha1.LastOperationTypeCreate))
	g.Expect(status.LastError.Description).To(Equal("boom"))
	SetSucceeded(status, extensionsv1alpha1.LastOperationTypeCreate, "ok", 1, time.Now())
	g.Expect(status.LastError).To(BeNil())
	g.Expect(Type(obj, status)).To(Equal(extensionsv1alpha1.LastOperationTypeReconcile))
}

func TestTriggerPredicateIgnoresStatusOnlyUpdates(t *testing.T) {
	g := NewWithT(t)
	p := TriggerPredicate()
	old := reconciledEntry()
	statusOnly := old.DeepCopy()
	SetProcessing(&statusOnly.Status.DefaultStatus, extensionsv1alpha1.LastOperationTypeReconcile, "x", time.Now())
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: statusOnly})).To(BeFalse())

	annotated := old.DeepCopy()
	annotated.Annotations = map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationReconcile}
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: annotated})).To(BeTrue())
	specChange := old.DeepCopy()
	specChange.Generation++
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: specChange})).To(BeTrue())
	deleting := old.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: deleting})).To(BeTrue())
}
