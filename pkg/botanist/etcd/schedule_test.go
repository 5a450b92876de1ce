package etcd

import (
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
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
