package pod

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// upstreamStartEtcdArgs are the wrapper arguments of upstream etcd-druid v0.38.1's StatefulSet
// (testdata/upstream-druid-v0.38.1-start-etcd.args names its source), without the subcommand.
func upstreamStartEtcdArgs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "upstream-druid-v0.38.1-start-etcd.args"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			args = append(args, line)
		}
	}
	if len(args) == 0 || args[0] != "start-etcd" {
		t.Fatalf("fixture starts with %v, want start-etcd", args)
	}
	return args[1:]
}

// A seed switches its image vector to our etcd-wrapper while upstream etcd-druid still renders the
// StatefulSet: our wrapper gets upstream's arguments (no step flags) on the data of a member that etcd 3.4
// or 3.5 wrote, killed with the v2 requests of its start still in the WAL. It steps the data with the
// older etcd servers our image carries, as it does under our druid, and serves every key — never exiting,
// so the container does not crash-loop. The image's servers are the pinned ones `make tools` builds, at
// the places the image's would be.
func TestSwitchedImagesStepOldDataUnderUpstreamDruidsArgs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs old etcd binaries")
	}
	image := map[string]string{}
	for _, v := range []string{"3.5", "3.6"} {
		bin, err := oldetcd.Binary(v)
		if err != nil {
			t.Fatal(err)
		}
		image[v] = bin
	}
	for _, version := range []string{"3.4", "3.5"} {
		t.Run("etcd "+version, func(t *testing.T) {
			g := NewWithT(t)
			w := oldetcd.Write{Version: version, Keys: 20, Stop: oldetcd.Kill}
			m := oldetcd.WriteDataDir(t, filepath.Join(t.TempDir(), "data"), w)
			m.Name = "etcd-main-0"
			v, ok := etcddata.InspectDataVersion(m.DataDir)
			g.Expect(ok).To(BeTrue())
			g.Expect(v.Unopenable()).NotTo(BeEmpty(), "etcd %s's data needs stepping", version)

			opts := wrapper.DefaultOptions()
			fs := pflag.NewFlagSet("start-etcd", pflag.ContinueOnError)
			opts.AddFlags(fs)
			g.Expect(fs.Parse(upstreamStartEtcdArgs(t))).To(Succeed())
			g.Expect(opts.Step35Binary+opts.Step36Binary).To(BeEmpty(), "upstream druid passes no step flags")

			p := newStepPod(t, []oldetcd.Member{m}, 0)
			// The pod's plumbing (the sidecar's address instead of the hostAlias, a free wrapper port) and
			// the image's etcd servers; everything else as upstream druid's arguments say.
			opts.BackupRestoreHostPort, opts.WrapperPort, opts.ListenHost = p.opts.BackupRestoreHostPort, p.opts.WrapperPort, p.opts.ListenHost
			opts.MarkerDir, opts.PollInterval, opts.EtcdLogger, opts.StepOutput = p.opts.MarkerDir, p.opts.PollInterval, p.opts.EtcdLogger, p.opts.StepOutput
			opts.ImageStepBinaries = image
			p.opts = opts
			p.start(0)

			g.Eventually(func() int {
				if p.restarts() > 0 {
					StopTrying("the wrapper exited: in a pod, a crash loop").Now()
				}
				return p.readyz()
			}, 2*time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK))
			g.Expect(servedKeys(t, m)).To(Equal(int64(w.Keys)))
			g.Eventually(func() string { return serverVersion(t, m) }, time.Minute, 100*time.Millisecond).Should(HavePrefix("3.7."))
			g.Expect(servedKeys(t, m)).To(Equal(int64(w.Keys)))
			g.Expect(p.restarts()).To(BeZero())

			p.stop()
			after, ok := etcddata.InspectDataVersion(m.DataDir)
			g.Expect(ok).To(BeTrue())
			g.Expect(after.Unopenable()).To(BeEmpty(), "the data opens under this etcd")
			g.Expect(initializer.MovedAside(m.DataDir)).To(BeEmpty())
		})
	}
}

// servedKeys counts the keys oldetcd wrote that m serves (a linearizable read).
func servedKeys(t *testing.T, m oldetcd.Member) int64 {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, oldetcd.KeyPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return r.Count
}
