package podupdate

import (
	"strings"
	"testing"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

const (
	leader   = druidv1alpha1.EtcdRoleLeader
	follower = druidv1alpha1.EtcdRoleMember
)

// member is ordinal i of etcd-main at revision with health h and role.
func member(i int, revision string, h Health, role druidv1alpha1.EtcdRole) Member {
	return Member{Pod: "etcd-main-" + string(rune('0'+i)), Ordinal: i, Revision: revision, Health: h, Role: role, Detail: h.String()}
}

func terminating(m Member) Member { m.Terminating = true; return m }

func running(m Member) Member { m.EtcdRunning = true; return m }

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          Input
		wantVerdict Verdict
		wantPod     string
		wantReason  string
	}{
		{
			name:        "every pod runs the update revision",
			in:          Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{member(0, "b", Serving, leader), member(1, "b", Serving, follower), member(2, "b", Unready, follower)}},
			wantVerdict: Done,
		},
		{
			name:        "a pod without revision label is not judged",
			in:          Input{UpdateRevision: "b", Replicas: 2, ClusterSize: 2, Members: []Member{member(0, "", Serving, leader), member(1, "b", Serving, follower)}},
			wantVerdict: Done,
		},
		{
			name:        "an out-of-date pod already terminating is under way",
			in:          Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{member(0, "b", Serving, leader), member(1, "b", Serving, follower), terminating(member(2, "a", Serving, follower))}},
			wantVerdict: Done,
		},
		{
			name: "healthy cluster: the highest follower first, not the leader",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, follower), member(1, "a", Serving, follower), member(2, "a", Serving, leader)}},
			wantVerdict: Delete, wantPod: "etcd-main-1", wantReason: "follower",
		},
		{
			name: "a member of unknown role goes after the followers and before the leader",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, ""), member(1, "b", Serving, follower), member(2, "a", Serving, leader)}},
			wantVerdict: Delete, wantPod: "etcd-main-0", wantReason: "names no role",
		},
		{
			name: "the leader last",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "b", Serving, follower), member(2, "b", Serving, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-0", wantReason: "leader, replaced last",
		},
		{
			name: "a member that does not serve goes first, whatever its ordinal and role",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Broken, leader), member(1, "a", Serving, follower), member(2, "a", Serving, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-0", wantReason: "not serving (broken)",
		},
		{
			name: "broken before starting before running unready",
			in: Input{UpdateRevision: "b", Replicas: 5, ClusterSize: 5, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Unready, follower), member(2, "a", Starting, follower), member(3, "a", Broken, follower), member(4, "a", Serving, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-3",
		},
		{
			name: "starting before running unready",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Unready, follower), member(2, "a", Starting, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-2",
		},
		{
			name: "a member that does not serve goes also while another is being replaced",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), terminating(member(1, "a", Serving, follower)), member(2, "a", Unready, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-2",
		},
		{
			name: "members whose etcd runs without being ready are not deleted below the quorum",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				running(member(0, "a", Unready, leader)), running(member(1, "a", Unready, follower)), running(member(2, "a", Unready, follower))}},
			wantVerdict: Hold, wantPod: "etcd-main-2", wantReason: "may still vote",
		},
		{
			name: "a member whose etcd runs without being ready waits for a replacement under way",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), running(member(1, "a", Unready, follower)), member(2, "b", Starting, follower)}},
			wantVerdict: Wait, wantPod: "etcd-main-2",
		},
		{
			name: "a member whose etcd runs without being ready goes while the others hold the quorum",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), running(member(2, "a", Unready, follower))}},
			wantVerdict: Delete, wantPod: "etcd-main-2", wantReason: "its etcd runs",
		},
		{
			name: "a member that does not serve goes also when the quorum is lost",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Unready, leader), member(1, "a", Unready, follower), member(2, "a", Broken, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-2",
		},
		{
			name: "a member that does not serve goes also while BackupReady is False",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, BackupNotReady: "BackupFailed: stale", Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), member(2, "a", Broken, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-2",
		},
		{
			name: "an updated member that is broken holds everything: the update revision does not start",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Unready, follower), member(2, "b", Broken, follower)}},
			wantVerdict: Hold, wantPod: "etcd-main-2", wantReason: "is broken",
		},
		{
			name: "the next template replaces the member broken by the previous one first",
			in: Input{UpdateRevision: "c", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), member(2, "b", Broken, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-2", wantReason: "not serving",
		},
		{
			name: "a serving member waits while an updated one does not serve yet",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), member(2, "b", Starting, follower)}},
			wantVerdict: Wait, wantPod: "etcd-main-2", wantReason: "does not serve yet",
		},
		{
			name: "a serving member waits while a pod terminates",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), terminating(member(2, "b", Serving, follower))}},
			wantVerdict: Wait, wantPod: "etcd-main-2", wantReason: "terminating",
		},
		{
			name: "a serving member waits while a pod is missing",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower)}},
			wantVerdict: Wait, wantReason: "ordinal 2 does not exist",
		},
		{
			name: "a serving member is held while BackupReady is False",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, BackupNotReady: "BackupFailed: stale", Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), member(2, "a", Serving, follower)}},
			wantVerdict: Hold, wantReason: "BackupReady is False: BackupFailed: stale",
		},
		{
			name: "quorum guard: a member that does not serve and cannot be told out of date",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), member(2, "", Unready, follower)}},
			wantVerdict: Hold, wantPod: "etcd-main-1", wantReason: "would leave 1 serving members, below the quorum of 2 of 3",
		},
		{
			name: "quorum guard counts against the recorded cluster size when it is larger",
			in: Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 5, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower), member(2, "a", Serving, follower)}},
			wantVerdict: Hold, wantPod: "etcd-main-2", wantReason: "below the quorum of 3 of 5",
		},
		{
			name: "five members: one serving member at a time with two to spare",
			in: Input{UpdateRevision: "b", Replicas: 5, ClusterSize: 5, Members: []Member{
				member(0, "b", Serving, follower), member(1, "a", Serving, leader), member(2, "a", Serving, follower), member(3, "a", Serving, follower), member(4, "b", Serving, follower)}},
			wantVerdict: Delete, wantPod: "etcd-main-3", wantReason: "4 members keep serving, the quorum is 3 of 5",
		},
		{
			name: "two members cannot spare one: held",
			in: Input{UpdateRevision: "b", Replicas: 2, ClusterSize: 2, Members: []Member{
				member(0, "a", Serving, leader), member(1, "a", Serving, follower)}},
			wantVerdict: Hold, wantPod: "etcd-main-1", wantReason: "below the quorum of 2 of 2",
		},
		{
			name: "a single serving member: its restart is the update",
			in: Input{UpdateRevision: "b", Replicas: 1, ClusterSize: 1, Members: []Member{
				member(0, "a", Serving, leader)}},
			wantVerdict: Delete, wantPod: "etcd-main-0", wantReason: "single member",
		},
		{
			name: "a single member is held while BackupReady is False",
			in: Input{UpdateRevision: "b", Replicas: 1, ClusterSize: 1, BackupNotReady: "BackupFailed: stale", Members: []Member{
				member(0, "a", Serving, leader)}},
			wantVerdict: Hold, wantReason: "BackupReady is False",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Plan(tc.in)
			if d.Verdict != tc.wantVerdict {
				t.Fatalf("verdict %s (%s), want %s", d.Verdict, d.Reason, tc.wantVerdict)
			}
			pod := ""
			if d.Member != nil {
				pod = d.Member.Pod
			}
			if pod != tc.wantPod {
				t.Errorf("member %q, want %q (%s)", pod, tc.wantPod, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.wantReason) {
				t.Errorf("reason %q, want it to contain %q", d.Reason, tc.wantReason)
			}
		})
	}
}

// Whatever the members' health and roles, Plan never deletes a serving member when fewer than the quorum
// would keep serving, and never a serving member while another is terminating or an updated one does not
// serve (one serving member at a time).
func TestPlanNeverDeletesAServingMemberBelowTheQuorumOrBesideAReplacement(t *testing.T) {
	healths := []Health{Broken, Starting, Unready, Serving}
	roles := []druidv1alpha1.EtcdRole{leader, follower, ""}
	for code := 0; code < 1<<12; code++ {
		var members []Member
		c := code
		for i := 0; i < 3; i++ {
			rev := []string{"a", "b"}[c%2]
			c /= 2
			h := healths[c%4]
			c /= 4
			m := member(i, rev, h, roles[(code>>i)%3])
			if (code>>(9+i))&1 == 1 {
				m.Terminating = true
			}
			members = append(members, m)
		}
		d := Plan(Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: members})
		if d.Verdict != Delete || d.Member.Health != Serving {
			continue
		}
		serving := 0
		for _, m := range members {
			if m.Health == Serving && !m.Terminating {
				serving++
			}
			if m.Terminating || (m.Revision == "b" && m.Health != Serving) {
				t.Fatalf("members %+v: deleted serving %s beside %s", members, d.Member.Pod, m.Pod)
			}
		}
		if serving-1 < 2 {
			t.Fatalf("members %+v: deleted serving %s leaving %d serving", members, d.Member.Pod, serving-1)
		}
	}
}

// A member whose etcd runs may vote although it is not ready (the readiness probe fails under load or while
// catching up). Whatever the members' health, Plan deletes such a member, or a serving one, only while the
// members that keep serving hold the quorum and no other replacement is under way: a flapping probe never
// cascades into deleting one voter after the other.
func TestPlanNeverDeletesAPossibleVoterBelowTheQuorumOrBesideAReplacement(t *testing.T) {
	healths := []Health{Broken, Starting, Unready, Serving}
	for code := 0; code < 1<<15; code++ {
		var members []Member
		c := code
		for i := 0; i < 3; i++ {
			m := member(i, []string{"a", "b"}[c%2], healths[(c/2)%4], []druidv1alpha1.EtcdRole{leader, follower}[i%2])
			m.EtcdRunning = (c/8)%2 == 1
			m.Terminating = (c/16)%2 == 1
			c /= 32
			members = append(members, m)
		}
		d := Plan(Input{UpdateRevision: "b", Replicas: 3, ClusterSize: 3, Members: members})
		if d.Verdict != Delete || (d.Member.Health != Serving && !d.Member.EtcdRunning) {
			continue
		}
		serving := 0
		for _, m := range members {
			if m.Health == Serving && !m.Terminating && m.Pod != d.Member.Pod {
				serving++
			}
			if m.Terminating || (m.Revision == "b" && m.Health != Serving) {
				t.Fatalf("members %+v: deleted possible voter %s beside the replacement of %s", members, d.Member.Pod, m.Pod)
			}
		}
		if serving < 2 {
			t.Fatalf("members %+v: deleted possible voter %s leaving %d serving", members, d.Member.Pod, serving)
		}
	}
}
