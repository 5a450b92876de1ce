package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/local"
)

func TestBucketDirectoryFollowsProviderConfigAndStatusReachesEntries(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	defaultRoot, configured := t.TempDir(), t.TempDir()
	p := local.New(defaultRoot)

	result, err := p.EnsureBucket(ctx, provider.BucketRequest{Name: "b1"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(filepath.Join(defaultRoot, "b1")).To(BeADirectory())
	g.Expect(result.GeneratedSecretData).To(HaveKeyWithValue("hostPath", []byte(defaultRoot)))

	cfg := &runtime.RawExtension{Raw: []byte(`{"hostPath":"` + configured + `"}`)}
	result, err = p.EnsureBucket(ctx, provider.BucketRequest{Name: "b2", ProviderConfig: cfg})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(filepath.Join(configured, "b2")).To(BeADirectory())

	// The bucket's provider status, copied into the entry by gardenlet, tells the entry where the bucket is.
	entry := provider.EntryRequest{Name: "shoot--p--s--uid", BucketName: "b2", BucketProviderStatus: result.ProviderStatus}
	g.Expect(p.EtcdSecretData(entry)).To(Equal(map[string][]byte{"hostPath": []byte(configured)}))

	entryDir := filepath.Join(configured, "b2", "shoot--p--s--uid", "etcd-main")
	sibling := filepath.Join(configured, "b2", "shoot--p--s--uid2")
	g.Expect(os.MkdirAll(entryDir, 0o755)).To(Succeed())
	g.Expect(os.MkdirAll(sibling, 0o755)).To(Succeed())
	g.Expect(p.DeleteEntry(ctx, entry)).To(Succeed())
	g.Expect(filepath.Join(configured, "b2", "shoot--p--s--uid")).NotTo(BeAnExistingFile())
	g.Expect(sibling).To(BeADirectory())

	g.Expect(p.DeleteBucket(ctx, provider.BucketRequest{Name: "b2", ProviderConfig: cfg})).To(Succeed())
	g.Expect(filepath.Join(configured, "b2")).NotTo(BeAnExistingFile())
}

func TestPathsCannotEscapeTheRoot(t *testing.T) {
	g := NewWithT(t)
	p := local.New(t.TempDir())
	_, err := p.EnsureBucket(context.Background(), provider.BucketRequest{Name: ".."})
	g.Expect(err).To(HaveOccurred())
	g.Expect(p.DeleteEntry(context.Background(), provider.EntryRequest{Name: "a/../..", BucketName: "b"})).NotTo(Succeed())
	_, err = p.EnsureBucket(context.Background(), provider.BucketRequest{Name: "b", ProviderConfig: &runtime.RawExtension{Raw: []byte(`{"hostPath":"relative"}`)}})
	g.Expect(err).To(MatchError(ContainSubstring("absolute")))
}
