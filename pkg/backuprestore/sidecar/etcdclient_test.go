package sidecar

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/tripwire"
)

// The cluster client asks a member only once its lease shows that it ran: the address of a member whose
// pod may have no address yet is never connected to, not even for a status, while one that ran is.
func TestTheClusterClientDialsOnlyMembersThatRan(t *testing.T) {
	self, ran, notYet := tripwire.New(t), tripwire.New(t), tripwire.New(t)
	templatePath := filepath.Join(t.TempDir(), "etcd.conf.yaml")
	writeTemplateWithClientURLs(t, templatePath, []string{self.URL(), ran.URL(), notYet.URL()})
	leases := func(_ context.Context, names []string) ([]string, error) {
		if slices.Contains(names, "etcd-main-1") {
			return []string{"etcd-main-1"}, nil
		}
		return nil, nil
	}
	o := &Options{HeartbeatDuration: time.Hour}
	cli, err := o.clusterClient(templatePath, []string{self.URL()}, nil, leases)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if eps := cli.Endpoints(); !slices.Equal(slices.Sorted(slices.Values(eps)), slices.Sorted(slices.Values([]string{ran.URL(), notYet.URL()}))) {
		t.Fatalf("endpoints %v, want the two other members", eps)
	}
	for _, ep := range cli.Endpoints() {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		_, err := cli.Status(ctx, ep) // neither is an etcd: the status fails either way
		cancel()
		if err == nil {
			t.Fatalf("status of %s answered", ep)
		}
	}
	if n := notYet.Connections(); n != 0 {
		t.Fatalf("the member that has not run was connected to %d times", n)
	}
	if ran.Connections() == 0 {
		t.Fatal("the member that ran was not connected to")
	}
}
