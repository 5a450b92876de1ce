package backupentry

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestShootNamespaceAndSecretNameFromEntryName(t *testing.T) {
	g := NewWithT(t)
	for entry, want := range map[string]string{
		"shoot--dev--app--6f1c0b1e-7a0e-4d5c-9c8e-0b5f6c7d8e9f":        "shoot--dev--app",
		"source-shoot--dev--app--6f1c0b1e-7a0e-4d5c-9c8e-0b5f6c7d8e9f": "shoot--dev--app",
		"garden--uid": "garden",
	} {
		g.Expect(ShootNamespace(entry)).To(Equal(want), entry)
	}
	for _, invalid := range []string{"noseparator", "--uid", "shoot--", "source-"} {
		_, err := ShootNamespace(invalid)
		g.Expect(err).To(HaveOccurred(), invalid)
	}
	g.Expect(EtcdBackupSecretNameFor("shoot--dev--app--uid")).To(Equal("etcd-backup"))
	g.Expect(EtcdBackupSecretNameFor("source-shoot--dev--app--uid")).To(Equal("source-etcd-backup"))
}
