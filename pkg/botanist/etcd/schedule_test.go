package etcd

import (
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// minuteOf parses "M H * * *" back into minutes after midnight.
func minuteOf(t *testing.T, cron string) int {
	t.Helper()
	f := strings.Fields(cron)
	if len(f) != 5 || f[2] != "*" || f[3] != "*" || f[4] != "*" {
		t.Fatalf("not a daily cron schedule: %q", cron)
	}
	m, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	h, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return h*60 + m
}

func TestDerivedSchedulesLieInsideTheWindowInUTC(t *testing.T) {
	cases := []struct {
		window      MaintenanceWindow
		begin, size int // minutes after midnight UTC, window length
	}{
		{MaintenanceWindow{Begin: "220000+0000", End: "230000+0000"}, 22 * 60, 60},
		// 23:00+0100 is 22:00 UTC; the window crosses midnight UTC.
		{MaintenanceWindow{Begin: "233000+0100", End: "013000+0100"}, 22*60 + 30, 120},
		{MaintenanceWindow{Begin: "230000+0000", End: "003000+0000"}, 23 * 60, 90},
	}
	for _, c := range cases {
		for _, ns := range []string{"shoot--a--b", "shoot--dev--x", "shoot--p--q", "shoot--z--z"} {
			defrag, full, err := derivedSchedules(c.window, ns, RoleMain)
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
			for _, s := range []string{defrag, full} {
				offset := (minuteOf(t, s) - c.begin + 24*60) % (24 * 60)
				if offset >= c.size {
					t.Errorf("window %v, namespace %s: schedule %q is %d minutes after the begin, outside the %d-minute window", c.window, ns, s, offset, c.size)
				}
			}
			if defrag == full {
				t.Errorf("window %v, namespace %s: defragmentation and full snapshot both at %q", c.window, ns, defrag)
			}
		}
	}
}

func TestDerivedSchedulesAreStablePerEtcdAndSpreadAcrossShoots(t *testing.T) {
	g := NewWithT(t)
	w := MaintenanceWindow{Begin: "000000+0000", End: "040000+0000"}
	d1, f1, _ := derivedSchedules(w, "shoot--a--b", RoleMain)
	d2, f2, _ := derivedSchedules(w, "shoot--a--b", RoleMain)
	g.Expect([]string{d1, f1}).To(Equal([]string{d2, f2}))
	seen := map[string]bool{}
	for i := range 20 {
		d, _, _ := derivedSchedules(w, "shoot--p--"+strconv.Itoa(i), RoleMain)
		seen[d] = true
	}
	g.Expect(len(seen)).To(BeNumerically(">", 10), "20 shoots in a 4h window should rarely share a minute")
}

func TestMaintenanceWindowErrors(t *testing.T) {
	g := NewWithT(t)
	_, _, err := derivedSchedules(MaintenanceWindow{Begin: "22:00", End: "230000+0000"}, "ns", RoleMain)
	g.Expect(err).To(MatchError(ContainSubstring(`begin "22:00"`)))
	_, _, err = derivedSchedules(MaintenanceWindow{Begin: "220000+0000", End: "220000+0000"}, "ns", RoleMain)
	g.Expect(err).To(MatchError(ContainSubstring("is empty")))
}

// Gardener's rule for schedules on an existing Etcd: what is there stays, even against a schedule the
// Values pass (a schedule may have been moved by an operator, and a moved full snapshot must not jump);
// only a defragmentation every N days (N > 1), the old default, is replaced by the daily one.
func TestSchedulesKeepWhatTheEtcdHasExceptEveryNDaysDefragmentation(t *testing.T) {
	g := NewWithT(t)
	withSchedules := func(defrag, full string) *druidv1alpha1.Etcd {
		obj := &druidv1alpha1.Etcd{}
		obj.Spec.Etcd.DefragmentationSchedule = ptr.To(defrag)
		obj.Spec.Backup.FullSnapshotSchedule = ptr.To(full)
		return obj
	}
	e := New(nil, "ns", Values{Role: RoleMain, DefragmentationSchedule: ptr.To("5 22 * * *"), FullSnapshotSchedule: ptr.To("6 22 * * *")}).(*etcd)
	cases := []struct{ existingDefrag, wantDefrag string }{
		{"7 3 * * *", "7 3 * * *"},
		{"7 3 * * 6", "7 3 * * 6"},
		{"7 3 */1 * *", "7 3 */1 * *"},
		{"7 3 */3 * *", "5 22 * * *"},
		{"7 3 */2 * *", "5 22 * * *"},
	}
	for _, c := range cases {
		defrag, full, err := e.schedules(withSchedules(c.existingDefrag, "0 */12 * * *"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(defrag).To(Equal(c.wantDefrag), c.existingDefrag)
		g.Expect(full).To(Equal("0 */12 * * *"), "an existing full snapshot schedule is kept")
	}
	defrag, full, err := e.schedules(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{defrag, full}).To(Equal([]string{"5 22 * * *", "6 22 * * *"}), "a new Etcd takes the Values")
}
