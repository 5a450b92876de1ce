package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// writeClusterTemplate writes druid's template for an Etcd of size members (no member needs to run: the
// refusals come before anything is asked).
func writeClusterTemplate(t *testing.T, path string, size int) {
	t.Helper()
	var clientURLs []string
	for i := range size {
		clientURLs = append(clientURLs, fmt.Sprintf("http://127.0.0.1:%d", 1+i))
	}
	writeTemplateWithClientURLs(t, path, clientURLs)
}

// writeTemplateWithClientURLs writes druid's template for an Etcd whose member i advertises clientURLs[i].
func writeTemplateWithClientURLs(t *testing.T, path string, clientURLs []string) {
	t.Helper()
	size := len(clientURLs)
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"}}
	e.Spec.Replicas = int32(size)
	druidv1alpha1.SetDefaults(e)
	tmpl := configmap.NewTemplate(e)
	tmpl.AdvertiseClientURLs, tmpl.InitialAdvertisePeerURLs = map[string][]string{}, map[string][]string{}
	var initial []string
	for i := range size {
		name := fmt.Sprintf("etcd-main-%d", i)
		tmpl.AdvertiseClientURLs[name] = []string{clientURLs[i]}
		tmpl.InitialAdvertisePeerURLs[name] = []string{fmt.Sprintf("http://127.0.0.1:%d", 101+i)}
		initial = append(initial, fmt.Sprintf("%s=http://127.0.0.1:%d", name, 101+i))
	}
	tmpl.InitialCluster = strings.Join(initial, ",")
	out, err := yaml.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A member that a scale-in removes never initializes again, so it cannot start, join as a new member or
// restore a cluster of its own before its pod is deleted: refused by its ordinal once the template shows
// the smaller cluster, and by the backup leader's mark on its lease while the kubelet still shows it the
// old template.
func TestScaledInMemberRefusesToInitialize(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	templatePath := filepath.Join(dir, "etcd.conf.yaml")
	var asked []string
	d := &decisionInitializer{served: newServedConfig(templatePath, "etcd-main-2"), dataDir: filepath.Join(dir, "data"), log: testr.New(t),
		leftCluster: func(_ context.Context, member string) (bool, error) {
			asked = append(asked, member)
			return true, nil
		}}

	writeClusterTemplate(t, templatePath, 1)
	err := d.Initialize(t.Context(), podwire.InitFull)
	g.Expect(err).To(MatchError(errScaledIn))
	g.Expect(err.Error()).To(ContainSubstring("ordinal 2 of pod etcd-main-2 is beyond the cluster size 1"))

	writeClusterTemplate(t, templatePath, 3) // the kubelet has not refreshed this pod's template yet
	err = d.Initialize(t.Context(), podwire.InitSanity)
	g.Expect(err).To(MatchError(errScaledIn))
	g.Expect(err.Error()).To(ContainSubstring("left-cluster mark"))
	g.Expect(asked).To(Equal([]string{"etcd-main-2"}))
	g.Expect(filepath.Join(dir, "data")).NotTo(BeADirectory(), "nothing was created or moved")
}

// A lease that cannot be read is no evidence that the member stays: an initialization that would create
// a new data directory (here: bootstrap, no data) is refused (the wrapper asks again) and nothing is
// created, rather than letting a member that the backup leader may have removed join again. The first
// member is never scaled in, so its start does not depend on the apiserver.
func TestUnreadableLeftClusterMarkRefusesToInitialize(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	templatePath := filepath.Join(dir, "etcd.conf.yaml")
	writeClusterTemplate(t, templatePath, 3)
	var asked []string
	unreadable := func(_ context.Context, member string) (bool, error) {
		asked = append(asked, member)
		return false, errors.New("the server is currently unable to handle the request")
	}
	d := &decisionInitializer{served: newServedConfig(templatePath, "etcd-main-2"), dataDir: filepath.Join(dir, "data"), log: testr.New(t),
		leftCluster: unreadable}

	err := d.Initialize(t.Context(), podwire.InitSanity)
	g.Expect(err).To(MatchError(errLeftClusterUnknown))
	g.Expect(err.Error()).To(ContainSubstring("etcd-main-2"))
	g.Expect(err.Error()).To(ContainSubstring("the server is currently unable to handle the request"))
	g.Expect(asked).To(Equal([]string{"etcd-main-2"}))
	g.Expect(filepath.Join(dir, "data")).NotTo(BeADirectory(), "nothing was created or moved")

	asked = nil
	first := &decisionInitializer{served: newServedConfig(templatePath, "etcd-main-0"), log: testr.New(t), leftCluster: unreadable}
	beforeChange, err := first.checkLeftCluster(t.Context(), 0, "etcd-main-0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(beforeChange).To(BeNil())
	g.Expect(asked).To(BeEmpty(), "the first member's lease is not read")
}

// A member whose data directory is valid and is used as it is gains nothing from the left-cluster mark:
// etcd itself refuses a member ID the cluster removed. So a restart while the apiserver is away (OOM,
// liveness) goes ahead on an unreadable lease, in sanity mode and in a full initialization that finds no
// quorum (the other members are down as well), and the data directory stays where it is. Only what would
// (re)add the member, restore or create a data directory waits for the mark
// (TestUnreadableLeftClusterMarkRefusesToInitialize).
func TestUnreadableLeftClusterMarkReusesValidData(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	templatePath := filepath.Join(dir, "etcd.conf.yaml")
	writeClusterTemplate(t, templatePath, 3)
	dataDir := filepath.Join(dir, "data")
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "etcd-main-2", DataDir: dataDir})
	if _, err := m.Client(t).Put(t.Context(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	m.Stop()

	var asked []string
	d := &decisionInitializer{served: newServedConfig(templatePath, "etcd-main-2"), dataDir: dataDir, log: testr.New(t),
		leftCluster: func(_ context.Context, member string) (bool, error) {
			asked = append(asked, member)
			return false, errors.New("the server is currently unable to handle the request")
		}}

	for _, mode := range []podwire.InitMode{podwire.InitSanity, podwire.InitFull} {
		g.Expect(d.Initialize(t.Context(), mode)).To(Succeed(), "mode %s", mode)
		cfg, err := d.served.resolve()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Member.Name).To(Equal("etcd-main-2"))
	}
	g.Expect(asked).To(Equal([]string{"etcd-main-2", "etcd-main-2"}))
	g.Expect(filepath.Join(dataDir, "member")).To(BeADirectory(), "the data directory is used as it is")
	g.Expect(initializer.MovedAside(dataDir)).To(BeEmpty())
}
