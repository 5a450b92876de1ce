package backupextension_test

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// Tight references: the extension copies the entry's source secret into `<shoot>/etcd-backup`,
// so a BackupEntry must not be able to name just any secret. Gardener's contract allows one source, the entry
// secret gardenlet relays for this very entry (`garden/entry-<entry name>`); anything else — a secret of
// another namespace, or another entry's secret in garden — is refused by the webhook (sweep_test.go) and, for
// an entry that got past it (bypassWebhookLabel), by the controller with an error naming spec.secretRef, in the
// status and as a warning event, and nothing is written into the shoot namespace.
func TestEntryRefusesASourceSecretGardenersContractDoesNotAllow(t *testing.T) {
	bb := newBucket(t, "local", nil)
	eventuallySucceeded(t, bb, func() *extensionsv1alpha1.DefaultStatus { return &bb.Status.DefaultStatus })
	t.Cleanup(func() { deleteAndWaitGone(t, bb) })

	victim := newShootNamespace(t)
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver-admin", Namespace: victim},
		Data:       map[string][]byte{"token": []byte("not-for-the-backup")},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), foreign)).To(Succeed())
	otherEntrySecret := createSecret(t, "entry-"+entryName(victim), map[string][]byte{"owner": []byte("another entry")})

	for name, ref := range map[string]func(entry string) corev1.SecretReference{
		"a secret of another namespace": func(string) corev1.SecretReference {
			return corev1.SecretReference{Name: foreign.Name, Namespace: foreign.Namespace}
		},
		"another entry's secret": func(string) corev1.SecretReference {
			return corev1.SecretReference{Name: otherEntrySecret.Name, Namespace: otherEntrySecret.Namespace}
		},
		"the entry's secret name outside garden": func(entry string) corev1.SecretReference {
			return corev1.SecretReference{Name: "entry-" + entry, Namespace: victim}
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			namespace := newShootNamespace(t)
			entry := entryName(namespace)
			be := &extensionsv1alpha1.BackupEntry{
				ObjectMeta: metav1.ObjectMeta{Name: entry, Labels: map[string]string{bypassWebhookLabel: ""}},
				Spec: extensionsv1alpha1.BackupEntrySpec{
					DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: bb.Spec.Type},
					Region:      bb.Spec.Region,
					BucketName:  bb.Name,
					SecretRef:   ref(entry),
				},
			}
			g.Expect(env.Client.Create(context.Background(), be)).To(Succeed())
			t.Cleanup(func() { forceRemove(t, be) })

			waitForError(t, be, "spec.secretRef")
			g.Expect(be.Status.LastError.Description).To(ContainSubstring("garden/entry-" + be.Name))
			g.Expect(be.Status.EtcdBackupSecretRef).To(BeNil())
			g.Expect(secretGone(namespace, "etcd-backup")()).To(BeTrue(), "nothing may be copied into the shoot namespace")
			g.Eventually(warningNotes(be.Name), timeout, interval).Should(ContainElement(ContainSubstring("spec.secretRef")))

			// Deleting the entry does not use the foreign credentials on the bucket either: the entry's
			// data stays, and the deletion reports the same field.
			g.Expect(env.Client.Delete(context.Background(), be)).To(Succeed())
			g.Eventually(func(g Gomega) {
				get(g, be)
				g.Expect(be.Status.LastOperation).NotTo(BeNil())
				g.Expect(be.Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeDelete))
				g.Expect(be.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateError))
				g.Expect(be.Status.LastError.Description).To(ContainSubstring("spec.secretRef"))
			}, timeout, interval).Should(Succeed())
		})
	}
}

// warningNotes lists the notes of the warning events regarding the named (cluster-scoped) object.
func warningNotes(name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Type == corev1.EventTypeWarning {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}
}

// The bucket secret is the bucket's credentials for the store, and the s3 provider copies them into the
// generated secret garden/generated-bucket-<name>: a BackupBucket naming any secret but the one gardenlet
// relays for it (garden/bucket-<name>) is refused — by the webhook, and by the controller for a bucket that
// got past it — and nothing is created or generated from the foreign secret.
func TestBucketRefusesASourceSecretGardenersContractDoesNotAllow(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	victim := newShootNamespace(t)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver-admin", Namespace: victim},
		Data: map[string][]byte{"token": []byte("not-for-the-bucket")}}
	g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())

	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: "bb-foreign-" + rand.String(6), Labels: map[string]string{bypassWebhookLabel: ""}},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"},
			Region:      "local",
			SecretRef:   corev1.SecretReference{Name: foreign.Name, Namespace: foreign.Namespace},
		},
	}
	g.Expect(env.Client.Create(ctx, bb)).To(Succeed())
	t.Cleanup(func() { forceRemove(t, bb) })
	g.Eventually(func(g Gomega) {
		get(g, bb)
		g.Expect(bb.Status.LastError).NotTo(BeNil())
		g.Expect(bb.Status.LastError.Description).To(And(ContainSubstring("spec.secretRef"), ContainSubstring("garden/bucket-"+bb.Name)))
	}, timeout, interval).Should(Succeed())
	g.Expect(bb.Status.GeneratedSecretRef).To(BeNil())
	g.Expect(secretGone("garden", "generated-bucket-"+bb.Name)()).To(BeTrue(), "nothing may be generated from a foreign secret")
	g.Expect(filepath.Join(localRoot, bb.Name)).NotTo(BeAnExistingFile(), "no bucket may be created with foreign credentials")
	g.Eventually(warningNotes(bb.Name), timeout, interval).Should(ContainElement(ContainSubstring("spec.secretRef")))
}
