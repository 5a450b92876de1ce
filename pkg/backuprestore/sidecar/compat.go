package sidecar

import (
	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// addIgnoredFlags accepts the flags the upstream etcd-druid renders for the upstream sidecar that have no
// meaning here, each with the reason (docs/compatibility.md). Flags with a meaning here are bound by
// AddFlags to the setting they mean.
func addIgnoredFlags(fs *pflag.FlagSet) *ignoredflags.Set {
	s := ignoredflags.New(fs)
	s.String(podwire.FlagRestorationTempSnapshotsDir, ignoredflags.WhyRestorationTempDir)
	s.String(podwire.FlagSnapstoreTempDirectory, ignoredflags.WhySnapstoreTempDir)
	s.Bool(podwire.FlagUseEtcdWrapper, "etcd always runs under this project's etcd-wrapper, which the sidecar serves and restarts")
	s.Duration("etcd-connection-timeout",
		"connections to etcd are opened without blocking, and every request carries its own timeout (--etcd-snapshot-timeout, --etcd-defrag-timeout, status checks)")
	s.Int64(podwire.FlagEmbeddedEtcdQuotaBytes,
		"a restore writes the deltas straight into the member's database; no embedded etcd applies them (the compact command takes this flag as its private etcd's quota)")
	s.String(podwire.FlagAutoCompactionMode, "a restore runs no embedded etcd to compact; the member's own auto-compaction comes from the etcd configuration druid renders")
	s.String(podwire.FlagAutoCompactionRetention, "a restore runs no embedded etcd to compact; the member's own auto-compaction comes from the etcd configuration druid renders")
	return s
}
