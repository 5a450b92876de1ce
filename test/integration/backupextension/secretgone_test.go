package backupextension_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// notesOf lists the notes of the events of the given type and reason regarding the named object.
func notesOf(name, eventType, reason string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Type == eventType && e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}
}

// Gardener's BackupEntry reconciler skips the deletion of the entry's data when the entry secret is gone
// and releases the finalizer, so that an entry whose secret gardenlet already removed does not hang for
// ever. The backups stay in the bucket (they are never deleted without the entry's credentials), and a
// warning event says so.
func TestEntryWhoseSecretIsGoneIsReleasedAndItsBackupsKept(t *testing.T) {
	g := NewWithT(t)
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	namespace := newShootNamespace(t)
	be := newEntry(t, bb, entryName(namespace), nil)
	eventuallySucceeded(t, be, func() *extensionsv1alpha1.DefaultStatus { return &be.Status.DefaultStatus })
	t.Cleanup(func() { forceRemove(t, be) })
	snapshot := filepath.Join(localRoot, bb.Name, be.Name, "etcd-main", "v2", "Full-00000000-00000001-1")
	g.Expect(os.MkdirAll(filepath.Dir(snapshot), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(snapshot, []byte("snapshot"), 0o644)).To(Succeed())

	entrySecret := &corev1.Secret{}
	entrySecret.Namespace, entrySecret.Name = be.Spec.SecretRef.Namespace, be.Spec.SecretRef.Name
	// The extension's finalizer holds the secret; it is gone only when removed by force.
	forceRemove(t, entrySecret)
	g.Eventually(secretGone(entrySecret.Namespace, entrySecret.Name), timeout, interval).Should(BeTrue())

	deleteAndWaitGone(t, be)
	g.Expect(snapshot).To(BeARegularFile(), "the backups are kept when the entry secret is gone")
	g.Eventually(notesOf(be.Name, corev1.EventTypeWarning, "BackupsNotDeleted"), timeout, interval).
		Should(ContainElement(ContainSubstring("were NOT deleted")))
}
