package sidecar

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// A single member's /healthz (its readiness) follows the latest backup upload. With the S3
// server gone, uploads fail; past three delta periods the member reports unhealthy although etcd serves.
func TestSingleMemberUnhealthyAfterSustainedBackupFailure(t *testing.T) {
	g := NewWithT(t)
	srv := s3server.Start(t)
	srv.CreateBucket(t, storeBucket)
	secretDir := t.TempDir()
	for key, value := range map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "region": srv.Region, "s3ForcePathStyle": "true"} {
		g.Expect(os.WriteFile(filepath.Join(secretDir, key), []byte(value), 0o600)).To(Succeed())
	}
	c := newCluster(t, 1)
	c.store = snapstore.Config{Provider: druidv1alpha1.StorageProviderS3, Container: storeBucket, Prefix: storePrefix,
		EndpointOverride: srv.Endpoint, SecretDir: secretDir}
	p := c.pods[0]
	p.sidecar.Store = c.store
	p.start()
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	cli := etcdserver.NewClient(t, p.client.String())

	healthz := func() int {
		code, _, err := p.get("/healthz")
		if err != nil {
			return 0
		}
		return code
	}
	rev := put(t, cli, "a/", 10)
	g.Eventually(func() int64 {
		if d := lastOf(c.snapshots(), snapshot.KindIncr); d != nil {
			return d.LastRevision
		}
		return 0
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(rev), "deltas reach the S3 server")
	g.Expect(healthz()).To(Equal(http.StatusOK))

	// The store goes away; writes keep coming, so every delta period tries an upload and fails.
	g.Expect(srv.Stop()).To(Succeed())
	put(t, cli, "b/", 10)
	g.Consistently(healthz, deltaPeriod, 100*time.Millisecond).Should(Equal(http.StatusOK), "a failure shorter than three delta periods is tolerated")
	g.Eventually(healthz, 30*time.Second, 200*time.Millisecond).Should(Equal(http.StatusServiceUnavailable))
	g.Expect(p.ready()).To(BeTrue(), "etcd itself still serves: only the member's readiness reports the backup")
	put(t, cli, "c/", 1)
}
