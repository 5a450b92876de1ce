package sidecar

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
)

// upstreamServerArgs are the arguments the upstream etcd-druid (internal/component/statefulset, builder.go)
// renders for the backup-restore container of Etcd etcd-main in shoot--p--s: client and backup TLS, an
// S3 store (its container only in $STORAGE_CONTAINER), compression, a delta retention period, profiling
// and the leader election settings.
func upstreamServerArgs() []string {
	return []string{"server",
		"--server-port=8080",
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=etcd-main-full-snap",
		"--delta-snapshot-lease-name=etcd-main-delta-snap",
		"--storage-provider=S3",
		"--store-prefix=shoot--p--s--uid/etcd-main",
		"--schedule=0 */24 * * *",
		"--delta-snapshot-period=5m0s",
		"--delta-snapshot-retention-period=72h0m0s",
		"--delta-snapshot-memory-limit=104857600",
		"--garbage-collection-policy=LimitBased",
		"--max-backups=7",
		"--garbage-collection-period=12h0m0s",
		"--compress-snapshots=true",
		"--compression-policy=gzip",
		"--etcd-snapshot-timeout=15m0s",
		"--defragmentation-schedule=0 3 * * *",
		"--etcd-defrag-timeout=15m0s",
		"--auto-compaction-mode=periodic",
		"--auto-compaction-retention=30m",
		"--cacert=/var/etcd/ssl/ca/ca.crt",
		"--cert=/var/etcd/ssl/client/tls.crt",
		"--key=/var/etcd/ssl/client/tls.key",
		"--insecure-transport=false",
		"--insecure-skip-tls-verify=false",
		"--endpoints=https://etcd-main-local:2379",
		"--service-endpoints=https://etcd-main-client:2379",
		"--server-cert=/var/etcdbr/ssl/server/tls.crt",
		"--server-key=/var/etcdbr/ssl/server/tls.key",
		"--data-dir=/var/etcd/data/new.etcd",
		"--restoration-temp-snapshots-dir=/var/etcd/data/restoration.temp",
		"--snapstore-temp-directory=/var/etcd/data/temp",
		"--etcd-connection-timeout=5m",
		"--use-etcd-wrapper=true",
		"--enable-member-lease-renewal=true",
		"--k8s-heartbeat-duration=10s",
		"--embedded-etcd-quota-bytes=8589934592",
		"--enable-profiling=true",
		"--etcd-connection-timeout-leader-election=7s",
		"--reelection-period=9s",
	}
}

// The upstream druid's sidecar arguments parse: meaningful flags reach their settings, the container
// comes from $STORAGE_CONTAINER, and the flags without meaning here are reported (once, at startup, by
// the command) with their values.
func TestAcceptsTheArgumentsUpstreamDruidRenders(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("STORAGE_CONTAINER", "bucket-1")
	t.Setenv("AWS_APPLICATION_CREDENTIALS", "/var/etcd-backup")
	o, err := parse(t, upstreamServerArgs())
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(o.Store.Provider).To(BeEquivalentTo("S3"))
	g.Expect(o.Store.Container).To(Equal("bucket-1"))
	g.Expect(o.Store.Prefix).To(Equal("shoot--p--s--uid/etcd-main"))
	g.Expect(o.Store.SecretDir).To(Equal("/var/etcd-backup"))
	g.Expect(o.Compression).To(Equal(snapshot.CompressionGzip))
	g.Expect(o.DeltaSnapshotRetentionPeriod).To(Equal(72 * time.Hour))
	g.Expect(o.snapshotterConfig().DeltaSnapshotRetentionPeriod).To(Equal(72 * time.Hour))
	g.Expect(o.InsecureTransport).To(BeFalse())
	g.Expect(o.InsecureSkipVerify).To(BeFalse())
	g.Expect(o.EnableProfiling).To(BeTrue())
	g.Expect(o.LeaderElectionTimeout).To(Equal(7 * time.Second))
	g.Expect(o.ReelectionPeriod).To(Equal(9 * time.Second))
	g.Expect(o.DataDir).To(Equal("/var/etcd/data/new.etcd"))
	g.Expect(o.Endpoints).To(Equal([]string{"https://etcd-main-local:2379"}))

	g.Expect(names(o.IgnoredFlags())).To(Equal([]string{
		"restoration-temp-snapshots-dir=/var/etcd/data/restoration.temp",
		"snapstore-temp-directory=/var/etcd/data/temp",
		"use-etcd-wrapper=true",
		"etcd-connection-timeout=5m0s",
		"embedded-etcd-quota-bytes=8589934592",
		"auto-compaction-mode=periodic",
		"auto-compaction-retention=30m",
	}))
	for _, f := range o.IgnoredFlags() {
		g.Expect(f.Why).NotTo(BeEmpty(), f.Name)
	}
}

// Without TLS the upstream druid asks to skip verification, which means nothing without TLS; a
// --store-container given wins over $STORAGE_CONTAINER; no ignored flag, nothing reported.
func TestUpstreamFlagsWithoutTLS(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("STORAGE_CONTAINER", "from-env")
	o, err := parse(t, []string{"server", "--insecure-transport=true", "--insecure-skip-tls-verify=true",
		"--endpoints=http://etcd-main-local:2379", "--storage-provider=Local", "--store-container=from-flag"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.InsecureSkipVerify).To(BeTrue())
	tlsConfig, err := o.clientTLS()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tlsConfig).To(BeNil())
	g.Expect(o.Store.Container).To(Equal("from-flag"))
	g.Expect(o.IgnoredFlags()).To(BeEmpty())
	g.Expect(o.LeaderElectionTimeout).To(BeZero())
}

func names(flags []ignoredflags.Flag) []string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		out = append(out, f.Name+"="+f.Value)
	}
	return out
}
