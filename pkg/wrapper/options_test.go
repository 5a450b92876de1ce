package wrapper

import (
	"testing"
	"time"

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

// The sidecar starts beside the wrapper: its API answers a moment after the wrapper's first poll, and the
// wrapper polls again within a quarter of a second rather than a second.
func TestSidecarIsPolledFourTimesASecond(t *testing.T) {
	NewWithT(t).Expect(DefaultOptions().PollInterval).To(Equal(250 * time.Millisecond))
}
