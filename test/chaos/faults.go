package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Durations are the lengths of the faults that last a while.
type Durations struct {
	// NetworkCut is how long a member's eth0 stays down. Past druid's grace periods (the Unknown and
	// NotReady thresholds, 1 + 5 minutes by default) druid deletes the member's pod.
	NetworkCut time.Duration
	// S3Down is how long the S3 store is stopped.
	S3Down time.Duration
	// DruidDown is how long druid stays scaled to 0 (10 minutes).
	DruidDown time.Duration
	// APIServerDown is how long the kube-apiserver stays stopped (10 minutes).
	APIServerDown time.Duration
	// StaleLeases is how long two members' leases are held stale while the members serve.
	StaleLeases time.Duration
	// DiskFull is how long a member's data volume stays full.
	DiskFull time.Duration
	// FrozenSidecars is how long two members' backup-restore containers are frozen while etcd serves. Druid
	// judges a quorum loss only once the members have been NotReady (a lease older than 1 + 5 minutes) for
	// its NotReady grace (5 more minutes): past 11 minutes it must hold back from a recovery.
	FrozenSidecars time.Duration
}

// FullDurations are the full run's: the ten-minute outages, a network cut past druid's grace
// periods.
var FullDurations = Durations{NetworkCut: 7 * time.Minute, S3Down: 2 * time.Minute, DruidDown: 10 * time.Minute,
	APIServerDown: 10 * time.Minute, StaleLeases: 7 * time.Minute, FrozenSidecars: 12 * time.Minute, DiskFull: 4 * time.Minute}

// Faults are every fault of the suite with the given durations. The quick ones (kills, the attacks) may
// run in many rounds; the long ones are marked by Long.
func Faults(d Durations) []Fault {
	return []Fault{
		{Name: "kill -9 etcd", Inject: killMemberContainer(etcdpod.ContainerEtcd)},
		{Name: "kill -9 backup-restore", Inject: killMemberContainer(etcdpod.ContainerBackupRestore)},
		{Name: "kill -9 druid", Inject: killDruid},
		{Name: "attack endpoints", Inject: attackEndpoints, NoRecovery: true, Quiet: true},
		{Name: "S3 down " + short(d.S3Down), Inject: s3Down(d.S3Down), After: backupReadyAgain},
		{Name: "network cut " + short(d.NetworkCut), Inject: networkCut(d.NetworkCut)},
		{Name: "disk full " + short(d.DiskFull), Inject: diskFull(d.DiskFull)},
		{Name: "stale leases " + short(d.StaleLeases), Inject: staleLeases(d.StaleLeases), NoRecovery: true},
		{Name: "frozen sidecars " + short(d.FrozenSidecars), Inject: frozenSidecars(d.FrozenSidecars), NoRecovery: true},
		{Name: "druid at 0 " + short(d.DruidDown), Inject: druidDown(d.DruidDown), NoRecovery: true},
		{Name: "apiserver down " + short(d.APIServerDown), Inject: apiserverDown(d.APIServerDown), NoRecovery: true},
	}
}

// Long reports whether a fault lasts minutes; a run gives each long fault one round.
func Long(f Fault) bool {
	for _, p := range []string{"S3 down", "network cut", "disk full", "stale leases", "frozen sidecars", "druid at 0", "apiserver down"} {
		if strings.HasPrefix(f.Name, p) {
			return true
		}
	}
	return false
}

// short is "7m" for 7 minutes, "20s" for 20 seconds.
func short(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// randomMember picks a member pod.
func randomMember(ctx context.Context, r *Round) (*corev1.Pod, error) {
	pods, err := r.Suite.memberPods(ctx)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, errors.New("no member pods")
	}
	names := slices.Sorted(maps.Keys(pods))
	return pods[names[r.Rand.IntN(len(names))]], nil
}

// killMemberContainer kills -9 the container of a random member through containerd and waits until the
// kubelet has seen it and restarted it (the restart count went up).
func killMemberContainer(container string) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		pod, err := randomMember(ctx, r)
		if err != nil {
			return "", err
		}
		return pod.Name, r.Suite.killContainer(ctx, pod, container)
	}
}

// killDruid kills -9 the druid container of a random druid pod (two replicas: the leader or the standby).
func killDruid(ctx context.Context, r *Round) (string, error) {
	pods, err := r.Suite.druidPods(ctx)
	if err != nil {
		return "", err
	}
	names := slices.Sorted(maps.Keys(pods))
	if len(names) == 0 {
		return "", errors.New("no druid pods")
	}
	pod := pods[names[r.Rand.IntN(len(names))]]
	return pod.Name, r.Suite.killContainer(ctx, pod, druid.Name)
}

// killContainer sends SIGKILL to the container's task on its node and waits for the kubelet's restart.
func (s *Suite) killContainer(ctx context.Context, pod *corev1.Pod, container string) error {
	id := containerID(pod, container)
	if id == "" {
		return fmt.Errorf("pod %s has no container %s", pod.Name, container)
	}
	before := restartCount(pod, container)
	if err := (node{ctr: s.ctr, name: pod.Spec.NodeName}).killTask(ctx, id); err != nil {
		return err
	}
	return poll(ctx, fmt.Sprintf("the kubelet restarting %s/%s", pod.Name, container), waitTimeout, func(ctx context.Context) (string, error) {
		p, err := s.pod(ctx, pod.Namespace, pod.Name)
		if err != nil {
			return "", err
		}
		if p.UID != pod.UID {
			return "", nil // replaced altogether
		}
		if n := restartCount(p, container); n <= before {
			return fmt.Sprintf("restart count %d", n), nil
		}
		return "", nil
	})
}

// networkCut sets eth0 down in a random member's pod network namespace for d, checks that the member is
// unreachable meanwhile, then sets it up again with the pod's default route (a link going down drops the
// routes through it).
func networkCut(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		pod, err := randomMember(ctx, r)
		if err != nil {
			return "", err
		}
		n := node{ctr: r.Suite.ctr, name: pod.Spec.NodeName}
		path, err := n.netNSPath(ctx, containerID(pod, etcdpod.ContainerEtcd))
		if err != nil {
			return pod.Name, err
		}
		routes, err := inNetNS(ctx, path, "-4", "route", "show", "default")
		if err != nil {
			return pod.Name, err
		}
		if _, err := inNetNS(ctx, path, "link", "set", "eth0", "down"); err != nil {
			return pod.Name, err
		}
		cutErr := expectUnreachable(ctx, pod.Status.PodIP)
		waitErr := pause(ctx, d)
		restoreCtx := context.WithoutCancel(ctx)
		if _, err := inNetNS(restoreCtx, path, "link", "set", "eth0", "up"); err != nil {
			// The pod may have been deleted by druid meanwhile, and its namespace with it.
			r.Note("eth0 up: %v", err)
			return pod.Name, errors.Join(cutErr, waitErr)
		}
		for _, line := range strings.Split(strings.TrimSpace(routes), "\n") {
			if line == "" {
				continue
			}
			if _, err := inNetNS(restoreCtx, path, append([]string{"route", "replace"}, strings.Fields(line)...)...); err != nil {
				return pod.Name, errors.Join(cutErr, waitErr, err)
			}
		}
		return pod.Name, errors.Join(cutErr, waitErr)
	}
}

// expectUnreachable fails unless the member's client port refuses or times out: the cut must cut.
func expectUnreachable(ctx context.Context, ip string) error {
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip, strconv.Itoa(int(etcdpod.DefaultClientPort))))
	if err == nil {
		_ = conn.Close()
		return fmt.Errorf("member at %s still reachable with eth0 down", ip)
	}
	return nil
}

// s3Down stops the seed's S3 server for d while the writer goes on.
func s3Down(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		s := r.Suite
		defer func() { _ = s.Seed.StartS3(context.WithoutCancel(ctx)) }()
		if err := s.Seed.StopS3(); err != nil {
			return "S3", err
		}
		waitErr := pause(ctx, d)
		return "S3", errors.Join(waitErr, s.Seed.StartS3(context.WithoutCancel(ctx)))
	}
}

// backupReadyAgain waits until druid reports BackupReady=True again after a store outage.
func backupReadyAgain(ctx context.Context, r *Round) error {
	begin := time.Now()
	err := poll(ctx, "BackupReady=True", waitTimeout, func(ctx context.Context) (string, error) {
		obj, err := seedworkflow.Component(r.Suite.Env, etcd.RoleMain).Get(ctx)
		if err != nil {
			return "", err
		}
		if c := druidv1alpha1.FindCondition(obj.Status.Conditions, druidv1alpha1.ConditionTypeBackupReady); c == nil || c.Status != druidv1alpha1.ConditionTrue {
			return "BackupReady is not True", nil
		}
		return "", nil
	})
	r.Note("BackupReady=True %s after Ready", time.Since(begin).Round(time.Second))
	return err
}

// druidDown scales druid's Deployment to 0 for d, checking meanwhile that no member lease goes stale (the
// sidecars renew them without druid's webhook), then scales it back.
func druidDown(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		s := r.Suite
		dep := &appsv1.Deployment{}
		key := client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: druid.Name}
		if err := s.Env.Client.Get(ctx, key, dep); err != nil {
			return "druid", err
		}
		replicas := *dep.Spec.Replicas
		if err := s.scaleDruid(ctx, 0); err != nil {
			return "druid", err
		}
		err := poll(ctx, "no druid pod left", waitTimeout, func(ctx context.Context) (string, error) {
			pods, err := s.druidPods(ctx)
			if len(pods) > 0 {
				return fmt.Sprintf("%d druid pods", len(pods)), err
			}
			return "", err
		})
		if err == nil {
			err = s.watchLeasesFor(ctx, r, d)
		}
		return "druid", errors.Join(err, s.scaleDruid(context.WithoutCancel(ctx), replicas))
	}
}

func (s *Suite) scaleDruid(ctx context.Context, replicas int32) error {
	dep := &appsv1.Deployment{}
	if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: druid.Name}, dep); err != nil {
		return err
	}
	patch := client.MergeFrom(dep.DeepCopy())
	dep.Spec.Replicas = &replicas
	return s.Env.Client.Patch(ctx, dep, patch)
}

// apiserverDown stops the kube-apiserver for d while the writer goes on (etcd-main does not need it).
func apiserverDown(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		s := r.Suite
		// Started again whatever happens: a round that left the apiserver down would break every later one.
		defer func() { _ = s.Seed.StartAPIServer(context.WithoutCancel(ctx)) }()
		if err := s.Seed.StopAPIServer(); err != nil {
			return "kube-apiserver", err
		}
		acked := s.Writer.AckedCount()
		waitErr := pause(ctx, d)
		r.Note("%d writes acknowledged while the apiserver was down", s.Writer.AckedCount()-acked)
		begin := time.Now()
		err := s.Seed.StartAPIServer(context.WithoutCancel(ctx))
		r.Note("apiserver back in %s", time.Since(begin).Round(100*time.Millisecond))
		return "kube-apiserver", errors.Join(waitErr, err)
	}
}
