package wrapper

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestOptionsValidation(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--backup-restore-host-port")))
	o.BackupRestoreHostPort = "etcd-main-local:8080"
	o.BackupRestoreTLSEnabled = true
	o.EtcdClientCertPath = "c"
	err := o.Validate()
	g.Expect(err).To(MatchError(ContainSubstring("--backup-restore-ca-cert-bundle-path")))
	g.Expect(err).To(MatchError(ContainSubstring("--etcd-client-key-path")))
}
