package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-semver/semver"
	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
)

// maxRunsPerVersion bounds how often one older etcd is started again because the data directory still
// needed it after it stopped (no snapshot after the entries the next version does not apply).
const maxRunsPerVersion = 5

// stepRequestTimeout bounds the requests that decide whether a member may leave an older etcd.
const stepRequestTimeout = 10 * time.Second

// stepEtcd is an older etcd minor version the data directory runs under before this etcd opens it.
type stepEtcd struct{ version, binary string }

// planSteps returns the older etcds that must run on dataDir, oldest first (etcddata.StepVersions), with
// the binaries of the options. An error wrapping etcddata.ErrDataVersion when this etcd must not open the
// directory and the wrapper cannot step it: etcd is then not started and the data is left as it is.
func planSteps(dataDir string, o Options) ([]stepEtcd, error) {
	v, exists, err := etcddata.ReadDataVersion(dataDir)
	if err != nil {
		return nil, fmt.Errorf("which etcd may open the data directory is unknown, so none is started: %w", err)
	}
	if !exists {
		return nil, nil
	}
	versions, err := v.StepVersions()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dataDir, err)
	}
	var plan []stepEtcd
	for _, version := range versions {
		bin := o.stepBinary(version)
		if bin == "" {
			return nil, fmt.Errorf("%w: %s: %s; no etcd %s binary is configured (--step-etcd-%s-binary) or in the image (%s) to "+
				"step it, so etcd is not started and the data is left as it is", etcddata.ErrDataVersion, dataDir, v.Unopenable(), version, version,
				o.ImageStepBinaries[version])
		}
		plan = append(plan, stepEtcd{version: version, binary: bin})
	}
	return plan, nil
}

// stepThrough brings the data directory to a version this etcd opens the way etcd's upgrade rule says,
// one minor version at a time and every member of the cluster through each, without losing a write: for
// each older etcd of the plan (initialPlan) it runs it as this member (olderEtcd: serving clients and
// peers) until the member may leave that version (mayLeave), writes two raft entries so that the older
// etcd snapshots after everything before them, stops it and reads the directory again: the same version
// runs again when the data still needs it (the snapshot did not happen). It returns stopped when a
// termination or a stop request ended it (the older etcd was stopped cleanly).
func (w *wrapper) stepThrough(ctx context.Context, config []byte, cfg *embed.Config, o Options, log logr.Logger) (stopped bool, err error) {
	plan, err := initialPlan(ctx, cfg, o, log)
	if err != nil {
		return false, err
	}
	runs := map[string]int{}
	for next := 0; next < len(plan); {
		s := plan[next]
		if runs[s.version]++; runs[s.version] > maxRunsPerVersion {
			return false, fmt.Errorf("%w: %s still needs etcd %s after %d runs of it", etcddata.ErrDataVersion, cfg.Dir, s.version, maxRunsPerVersion)
		}
		// A member more than one minor version ahead would panic on what this one replicates (etcd 3.7 on
		// the v2 requests etcd 3.5 logs when it starts).
		if above := membersAbove(ctx, cfg, *nextMinor(s.version)); len(above) > 0 {
			return false, fmt.Errorf("%w: %s needs etcd %s, but members %s run a version more than one minor version newer; "+
				"this member is not started (remove it from the cluster and let it join again with empty data)",
				etcddata.ErrDataVersion, cfg.Dir, s.version, strings.Join(above, ", "))
		}
		log.Info("Running an older etcd as this member before this etcd", "version", s.version, "binary", s.binary,
			"plan", planVersions(plan), "run", runs[s.version])
		stepConfig, err := withSnapshotCount(config, 1)
		if err != nil {
			return false, err
		}
		older, err := startOlderEtcd(s, stepConfig, cfg, o, o.stepOutput())
		if err != nil {
			return false, err
		}
		w.setOlder(older)
		left, runErr := w.runUntilLeave(ctx, older, cfg.Name, o, log)
		w.setOlder(nil)
		stopErr := older.stop()
		switch {
		case runErr != nil:
			return false, runErr
		case stopErr != nil:
			return false, stopErr
		case !left:
			log.Info("Stopped the older etcd", "version", s.version)
			return true, nil
		}
		still, err := planSteps(cfg.Dir, o)
		if err != nil {
			return false, err
		}
		if len(still) > 0 && newer(s.version, still[0].version) {
			return false, fmt.Errorf("%w: %s needs etcd %s again after etcd %s ran on it; a newer etcd must not run before an older one again",
				etcddata.ErrDataVersion, cfg.Dir, still[0].version, s.version)
		}
		if len(still) > 0 && still[0].version == s.version {
			log.Info("The data directory still needs the older etcd: running it again", "version", s.version, "needs", planVersions(still))
			continue
		}
		log.Info("The older etcd stopped: this member left its version", "version", s.version)
		next++
	}
	return false, nil
}

// initialPlan is what the data directory needs (planSteps), which always ends with etcd 3.6: this etcd
// starts only in a cluster whose members all run 3.6 or newer, since it panics on the v2 requests that
// older members log and replicate. For the same reason, data that needs nothing still runs under 3.6 first
// while another member of the cluster answers with an older etcd (membersBelow).
func initialPlan(ctx context.Context, cfg *embed.Config, o Options, log logr.Logger) ([]stepEtcd, error) {
	plan, err := planSteps(cfg.Dir, o)
	if err != nil || len(plan) > 0 {
		return plan, err
	}
	below := membersBelow(ctx, cfg, semver.Version{Major: 3, Minor: 6})
	if len(below) == 0 {
		return nil, nil
	}
	step36 := o.stepBinary("3.6")
	if step36 == "" {
		return nil, fmt.Errorf("%w: members %s run etcd older than 3.6, which log requests this etcd panics on; no etcd 3.6 "+
			"binary is configured (--step-etcd-3.6-binary) to run as this member until they run 3.6, so etcd is not started",
			etcddata.ErrDataVersion, strings.Join(below, ", "))
	}
	log.Info("Other members run etcd older than 3.6: this member runs etcd 3.6 until they do", "members", below)
	return []stepEtcd{{version: "3.6", binary: step36}}, nil
}

// newer tells whether minor version a is newer than b ("3.6" > "3.5").
func newer(a, b string) bool {
	va, errA := minorOf(a + ".0")
	vb, errB := minorOf(b + ".0")
	return errA == nil && errB == nil && vb.LessThan(*va)
}

// runUntilLeave polls until this member may leave the older etcd's version and then forces a snapshot
// (left), or until a termination or stop request (not left), or fails when the older etcd exits.
func (w *wrapper) runUntilLeave(ctx context.Context, older *olderEtcd, self string, o Options, log logr.Logger) (left bool, err error) {
	var lastWhy string
	for {
		select {
		case <-older.exited:
			return false, fmt.Errorf("etcd %s exited: %v", older.version, older.err)
		case <-ctx.Done():
			return false, nil
		case <-w.stop:
			return false, nil
		case <-time.After(o.PollInterval):
		}
		why := mayLeave(ctx, older, self)
		if why != "" {
			if why != lastWhy {
				log.Info("Staying on the older etcd", "version", older.version, "reason", why)
				lastWhy = why
			}
			continue
		}
		if err := forceSnapshot(ctx, older.client); err != nil {
			log.Info("Could not write the entries that force a snapshot; trying again", "version", older.version, "error", err.Error())
			continue
		}
		// Once more right before the stop: another member may have gone meanwhile (a pod of a rolling
		// update), and two members down lose a three-member cluster's quorum.
		if why := mayLeave(ctx, older, self); why != "" {
			log.Info("Staying on the older etcd", "version", older.version, "reason", why)
			lastWhy = why
			continue
		}
		return true, nil
	}
}

// mayLeave says why this member (self) must still run the older etcd's version, "" when it may leave it:
// every member answers and runs at least that version (no member writes the older requests the next
// version does not apply any more), the cluster version has reached it (etcd's rule for starting the next
// one; the database records it, etcddata.DataVersion.ClusterVersion), and every member named before this
// one already left it — one member restarts at a time, so the cluster keeps its quorum.
func mayLeave(ctx context.Context, older *olderEtcd, self string) string {
	ctx, cancel := context.WithTimeout(ctx, stepRequestTimeout)
	defer cancel()
	version, cli := older.version, older.client
	current := semver.New(version + ".0")
	cluster, err := older.clusterVersion(ctx)
	if err != nil {
		return "the cluster version: " + err.Error()
	}
	if cluster.LessThan(*current) {
		return fmt.Sprintf("the cluster version is still %s", cluster)
	}
	list, err := cli.MemberList(ctx)
	if err != nil {
		return "the member list: " + err.Error()
	}
	members := list.Members
	slices.SortFunc(members, func(a, b *etcdserverpb.Member) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range members {
		if m.Name == "" || len(m.ClientURLs) == 0 {
			return fmt.Sprintf("member %x has not started yet", m.ID)
		}
		st, err := cli.Status(ctx, m.ClientURLs[0])
		if err != nil {
			return fmt.Sprintf("member %s does not answer: %v", m.Name, err)
		}
		runs, err := minorOf(st.Version)
		if err != nil {
			return fmt.Sprintf("member %s: %v", m.Name, err)
		}
		switch {
		case runs.LessThan(*current):
			return fmt.Sprintf("member %s runs etcd %s: every member must run etcd %s or newer first", m.Name, st.Version, version)
		case m.Name < self && !current.LessThan(*runs):
			return fmt.Sprintf("member %s leaves etcd %s first", m.Name, version)
		}
	}
	return ""
}

// forceSnapshot revokes two leases that do not exist: raft entries that change nothing and that, unlike
// a lease grant, pass even a database at its quota (etcd checks the quota for puts, transactions and
// grants only), after which an older etcd with snapshot-count 1 takes a snapshot. Each is proposed,
// committed and applied like any request, and answered "lease not found".
func forceSnapshot(ctx context.Context, cli *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, stepRequestTimeout)
	defer cancel()
	for range 2 {
		id := clientv3.LeaseID(rand.Int64N(math.MaxInt64-1) + 1)
		if _, err := cli.Revoke(ctx, id); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return err
		}
	}
	return nil
}

// nextMinor is the minor version after version ("3.5" → 3.6.0).
func nextMinor(version string) *semver.Version {
	v := semver.New(version + ".0")
	return &semver.Version{Major: v.Major, Minor: v.Minor + 1}
}

// minorOf is the major.minor of an etcd server version ("3.6.16" → 3.6.0).
func minorOf(v string) (*semver.Version, error) {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return nil, fmt.Errorf("etcd version %q: %w", v, err)
	}
	return &semver.Version{Major: sv.Major, Minor: sv.Minor}, nil
}

func planVersions(plan []stepEtcd) []string {
	var out []string
	for _, s := range plan {
		out = append(out, s.version)
	}
	return out
}

// stepBinary is the etcd server of the minor version the data runs under first: the flag's, else the
// image's when the file is there; "" when there is none.
func (o Options) stepBinary(version string) string {
	flag := ""
	switch version {
	case "3.5":
		flag = o.Step35Binary
	case "3.6":
		flag = o.Step36Binary
	}
	if flag != "" {
		return flag
	}
	if bin := o.ImageStepBinaries[version]; bin != "" {
		if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
			return bin
		}
	}
	return ""
}

func (o Options) stepOutput() io.Writer {
	if o.StepOutput != nil {
		return o.StepOutput
	}
	return os.Stderr
}
