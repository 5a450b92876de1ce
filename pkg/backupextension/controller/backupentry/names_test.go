package backupentry

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

func TestShootNamespaceAndSecretNameFromEntryName(t *testing.T) {
	g := NewWithT(t)
	for entry, want := range map[string]string{
		"shoot--dev--app--6f1c0b1e-7a0e-4d5c-9c8e-0b5f6c7d8e9f":        "shoot--dev--app",
		"source-shoot--dev--app--6f1c0b1e-7a0e-4d5c-9c8e-0b5f6c7d8e9f": "shoot--dev--app",
		"shoot-legacy-app--uid": "shoot-legacy-app",
	} {
		g.Expect(ShootNamespace(entry)).To(Equal(want), entry)
	}
	for _, invalid := range []string{"noseparator", "--uid", "shoot--", "source-",
		// Only shoot namespaces: a name must not pick kube-system, garden or any namespace of its choice.
		"garden--uid", "kube-system--uid", "source-kube-system--uid", "shoot--dev--app--uid--x--", "shoot----uid",
		"shoot--Dev--app--uid", "shoot--dev.app--uid", "shoot--" + strings.Repeat("a", 60) + "--uid"} {
		_, err := ShootNamespace(invalid)
		g.Expect(err).To(HaveOccurred(), invalid)
	}
	g.Expect(EtcdBackupSecretNameFor("shoot--dev--app--uid")).To(Equal("etcd-backup"))
	g.Expect(EtcdBackupSecretNameFor("source-shoot--dev--app--uid")).To(Equal("source-etcd-backup"))
}

func TestOnlyTheRelayedEntrySecretIsAValidSource(t *testing.T) {
	g := NewWithT(t)
	entry := func(namespace, name string) *extensionsv1alpha1.BackupEntry {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--dev--app--uid"}}
		be.Spec.SecretRef = corev1.SecretReference{Namespace: namespace, Name: name}
		return be
	}
	g.Expect(validateSecretRef(entry("garden", "entry-shoot--dev--app--uid"))).To(Succeed())
	for _, ref := range [][2]string{
		{"shoot--dev--other", "entry-shoot--dev--app--uid"},
		{"garden", "entry-shoot--dev--other--uid"},
		{"garden", "bucket-shoot--dev--app--uid"},
		{"", "entry-shoot--dev--app--uid"},
	} {
		err := validateSecretRef(entry(ref[0], ref[1]))
		g.Expect(err).To(MatchError(And(
			ContainSubstring(`spec.secretRef: Invalid value: "`+ref[0]+"/"+ref[1]+`"`),
			ContainSubstring("must be garden/entry-shoot--dev--app--uid"),
		)), "%v", ref)
	}
}
