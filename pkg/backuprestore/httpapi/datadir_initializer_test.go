package httpapi

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

func TestDataDirOnlyInitializer(t *testing.T) {
	g := NewWithT(t)
	root := t.TempDir()

	g.Expect(DataDirOnlyInitializer{DataDir: filepath.Join(root, "missing")}.Initialize(t.Context(), podwire.InitFull)).To(Succeed(), "a fresh member")
	empty := filepath.Join(root, "empty")
	g.Expect(os.Mkdir(empty, 0o700)).To(Succeed())
	g.Expect(DataDirOnlyInitializer{DataDir: empty}.Initialize(t.Context(), podwire.InitSanity)).To(Succeed())

	realDir := filepath.Join(root, "etcd")
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: realDir})
	m.Stop()
	g.Expect(DataDirOnlyInitializer{DataDir: realDir}.Initialize(t.Context(), podwire.InitFull)).To(Succeed(), "a data dir etcd wrote")

	junk := filepath.Join(root, "junk")
	g.Expect(os.MkdirAll(filepath.Join(junk, "member", "wal"), 0o700)).To(Succeed())
	err := DataDirOnlyInitializer{DataDir: junk}.Initialize(t.Context(), podwire.InitFull)
	g.Expect(err).To(MatchError(ContainSubstring("member/snap/db")))
}
