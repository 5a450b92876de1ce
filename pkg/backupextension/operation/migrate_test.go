package operation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

func annotated(be *extensionsv1alpha1.BackupEntry, operation string) *extensionsv1alpha1.BackupEntry {
	be.Annotations = map[string]string{extensionsv1alpha1.OperationAnnotation: operation}
	return be
}

func deleting(be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.BackupEntry {
	be.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	return be
}

// migratedEntry is an entry whose migration succeeded: no finalizer, no annotation.
func migratedEntry() *extensionsv1alpha1.BackupEntry {
	be := reconciledEntry()
	be.Finalizers = nil
	SetSucceeded(&be.Status.DefaultStatus, extensionsv1alpha1.LastOperationTypeMigrate, "migrated", 3, time.Now())
	return be
}

func withLastOperation(be *extensionsv1alpha1.BackupEntry, opType extensionsv1alpha1.LastOperationType) *extensionsv1alpha1.BackupEntry {
	SetError(&be.Status.DefaultStatus, opType, errors.New("boom"), time.Now())
	return be
}

func TestTypeFollowsTheOperationAnnotationThenTheDeletionThenAnUnfinishedOperation(t *testing.T) {
	for name, tc := range map[string]struct {
		be   *extensionsv1alpha1.BackupEntry
		want extensionsv1alpha1.LastOperationType
	}{
		"migrate":                      {annotated(reconciledEntry(), extensionsv1alpha1.OperationMigrate), extensionsv1alpha1.LastOperationTypeMigrate},
		"migrate wins over a deletion": {deleting(annotated(reconciledEntry(), extensionsv1alpha1.OperationMigrate)), extensionsv1alpha1.LastOperationTypeMigrate},
		"restore":                      {annotated(migratedEntry(), extensionsv1alpha1.OperationRestore), extensionsv1alpha1.LastOperationTypeRestore},
		"restore of a new entry":       {annotated(&extensionsv1alpha1.BackupEntry{}, extensionsv1alpha1.OperationRestore), extensionsv1alpha1.LastOperationTypeRestore},
		"reconcile annotation":         {annotated(reconciledEntry(), extensionsv1alpha1.OperationReconcile), extensionsv1alpha1.LastOperationTypeReconcile},
		"deletion":                     {deleting(reconciledEntry()), extensionsv1alpha1.LastOperationTypeDelete},
		"failed migrate goes on":       {withLastOperation(reconciledEntry(), extensionsv1alpha1.LastOperationTypeMigrate), extensionsv1alpha1.LastOperationTypeMigrate},
		"failed restore goes on":       {withLastOperation(reconciledEntry(), extensionsv1alpha1.LastOperationTypeRestore), extensionsv1alpha1.LastOperationTypeRestore},
		"failed reconcile":             {withLastOperation(reconciledEntry(), extensionsv1alpha1.LastOperationTypeReconcile), extensionsv1alpha1.LastOperationTypeReconcile},
		"after a migration":            {migratedEntry(), extensionsv1alpha1.LastOperationTypeReconcile},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(Type(tc.be, &tc.be.Status.DefaultStatus)).To(Equal(tc.want))
		})
	}
}

func TestSkipLeavesAMigratedObjectAloneUnlessRestored(t *testing.T) {
	for name, tc := range map[string]struct {
		be   *extensionsv1alpha1.BackupEntry
		skip bool
	}{
		"migrated":                           {migratedEntry(), true},
		"migrated, reconcile annotation":     {annotated(migratedEntry(), extensionsv1alpha1.OperationReconcile), true},
		"migrated, new generation":           {func() *extensionsv1alpha1.BackupEntry { be := migratedEntry(); be.Generation++; return be }(), true},
		"migrated, being deleted":            {deleting(migratedEntry()), true},
		"migrated, restore annotation":       {annotated(migratedEntry(), extensionsv1alpha1.OperationRestore), false},
		"migrated, migrate annotation":       {annotated(migratedEntry(), extensionsv1alpha1.OperationMigrate), false},
		"reconciled, reconcile annotation":   {annotated(reconciledEntry(), extensionsv1alpha1.OperationReconcile), false},
		"migration failed":                   {withLastOperation(reconciledEntry(), extensionsv1alpha1.LastOperationTypeMigrate), false},
		"restore failed, restore annotation": {annotated(withLastOperation(migratedEntry(), extensionsv1alpha1.LastOperationTypeRestore), extensionsv1alpha1.OperationRestore), false},
	} {
		t.Run(name, func(t *testing.T) {
			status := &tc.be.Status.DefaultStatus
			NewWithT(t).Expect(Skip(Type(tc.be, status), status)).To(Equal(tc.skip))
		})
	}
}

func TestNeedsReconcileForARestore(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NeedsReconcile(annotated(reconciledEntry(), extensionsv1alpha1.OperationRestore), &reconciledEntry().Status.DefaultStatus, finalizer)).To(BeTrue())
	g.Expect(NeedsReconcile(annotated(reconciledEntry(), "wait-for-state"), &reconciledEntry().Status.DefaultStatus, finalizer)).To(BeFalse(), "an operation this controller does not implement")
}

func TestTriggerPredicateLetsMigrateAndRestoreThrough(t *testing.T) {
	g := NewWithT(t)
	p := TriggerPredicate()
	old := reconciledEntry()
	for _, op := range []string{extensionsv1alpha1.OperationMigrate, extensionsv1alpha1.OperationRestore} {
		g.Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: annotated(old.DeepCopy(), op)})).To(BeTrue(), op)
	}
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: annotated(old.DeepCopy(), "wait-for-state")})).To(BeFalse())
}

// runnerFor stores be in a fake apiserver and returns a runner of BackupEntries with a recorder that keeps its
// events.
func runnerFor(t *testing.T, be *extensionsv1alpha1.BackupEntry) (*Runner[*extensionsv1alpha1.BackupEntry], client.Client, *events.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(extensionsv1alpha1.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(be).WithStatusSubresource(be).Build()
	recorder := events.NewFakeRecorder(10)
	return &Runner[*extensionsv1alpha1.BackupEntry]{
		Client:    c,
		Recorder:  recorder,
		Finalizer: finalizer,
		Status: func(be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.DefaultStatus {
			return &be.Status.DefaultStatus
		},
	}, c, recorder
}

// stored reads be back from the fake apiserver.
func stored(g Gomega, c client.Client, be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.BackupEntry {
	out := &extensionsv1alpha1.BackupEntry{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(be), out)).To(Succeed())
	return out
}

func recorded(recorder *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-recorder.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func TestMigrateRecordsSuccessThenReleasesTheFinalizerAndTheAnnotation(t *testing.T) {
	g := NewWithT(t)
	be := annotated(reconciledEntry(), extensionsv1alpha1.OperationMigrate)
	r, c, recorder := runnerFor(t, be)
	obj := stored(g, c, be)
	ran := false
	_, err := r.Migrate(context.Background(), obj, func(context.Context) error {
		ran = true
		g.Expect(stored(g, c, be).Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateProcessing))
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ran).To(BeTrue())
	got := stored(g, c, be)
	g.Expect(got.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeMigrate))
	g.Expect(got.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
	g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	g.Expect(got.Status.LastError).To(BeNil())
	g.Expect(got.Finalizers).NotTo(ContainElement(finalizer))
	g.Expect(got.Annotations).NotTo(HaveKey(extensionsv1alpha1.OperationAnnotation))
	g.Expect(recorded(recorder)).To(ConsistOf(HavePrefix("Normal MigrateSucceeded")))

	// A repeated migrate of a migrated object does not run the actuator again.
	ran = false
	_, err = r.Migrate(context.Background(), annotated(got, extensionsv1alpha1.OperationMigrate), func(context.Context) error { ran = true; return nil })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ran).To(BeFalse())
}

func TestFailedMigrateKeepsTheFinalizerAndTheAnnotation(t *testing.T) {
	g := NewWithT(t)
	be := annotated(reconciledEntry(), extensionsv1alpha1.OperationMigrate)
	r, c, recorder := runnerFor(t, be)
	_, err := r.Migrate(context.Background(), stored(g, c, be), func(context.Context) error { return errors.New("store unreachable") })
	g.Expect(err).To(MatchError(ContainSubstring("store unreachable")))
	got := stored(g, c, be)
	g.Expect(got.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeMigrate))
	g.Expect(got.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateError))
	g.Expect(got.Status.LastError.Description).To(Equal("store unreachable"))
	g.Expect(got.Finalizers).To(ContainElement(finalizer))
	g.Expect(got.Annotations).To(HaveKeyWithValue(extensionsv1alpha1.OperationAnnotation, extensionsv1alpha1.OperationMigrate))
	g.Expect(recorded(recorder)).To(ConsistOf(HavePrefix("Warning MigrateFailed")))
}

func TestReconcileOfARestoreIsARestore(t *testing.T) {
	g := NewWithT(t)
	be := annotated(migratedEntry(), extensionsv1alpha1.OperationRestore)
	r, c, recorder := runnerFor(t, be)
	_, err := r.Reconcile(context.Background(), stored(g, c, be), func(context.Context) error { return errors.New("no secret") })
	g.Expect(err).To(HaveOccurred())
	got := stored(g, c, be)
	g.Expect(got.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeRestore))
	g.Expect(got.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateError))
	g.Expect(got.Annotations).To(HaveKeyWithValue(extensionsv1alpha1.OperationAnnotation, extensionsv1alpha1.OperationRestore))

	_, err = r.Reconcile(context.Background(), got, func(context.Context) error { return nil })
	g.Expect(err).NotTo(HaveOccurred())
	got = stored(g, c, be)
	g.Expect(got.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeRestore))
	g.Expect(got.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded))
	g.Expect(got.Finalizers).To(ContainElement(finalizer))
	g.Expect(got.Annotations).NotTo(HaveKey(extensionsv1alpha1.OperationAnnotation))
	events := recorded(recorder)
	g.Expect(events).To(HaveLen(2))
	g.Expect(strings.HasPrefix(events[0], "Warning RestoreFailed")).To(BeTrue(), events[0])
	g.Expect(strings.HasPrefix(events[1], "Normal RestoreSucceeded")).To(BeTrue(), events[1])
}
