package etcd

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// MaintenanceWindow is the daily window in which a shoot may be disturbed, in Gardener's notation
// "HHMMSS+ZZZZ" (e.g. "220000+0100"). Full snapshots and defragmentation load the etcd, so they are
// scheduled inside it.
type MaintenanceWindow struct {
	Begin string
	End   string
}

// DefaultMaintenanceWindow is used when a shoot has none: late evening UTC.
var DefaultMaintenanceWindow = MaintenanceWindow{Begin: "220000+0000", End: "230000+0000"}

const maintenanceTimeLayout = "150405-0700"

// window returns the begin of the window as minutes after midnight UTC and its length in minutes.
func (w MaintenanceWindow) window() (beginMinute, lengthMinutes int, err error) {
	begin, err := time.Parse(maintenanceTimeLayout, w.Begin)
	if err != nil {
		return 0, 0, fmt.Errorf("maintenance window begin %q: want HHMMSS+ZZZZ: %w", w.Begin, err)
	}
	end, err := time.Parse(maintenanceTimeLayout, w.End)
	if err != nil {
		return 0, 0, fmt.Errorf("maintenance window end %q: want HHMMSS+ZZZZ: %w", w.End, err)
	}
	const day = 24 * 60
	b := minuteOfDayUTC(begin)
	length := (minuteOfDayUTC(end) - b + day) % day
	if length == 0 {
		return 0, 0, fmt.Errorf("maintenance window %s-%s is empty", w.Begin, w.End)
	}
	return b, length, nil
}

func minuteOfDayUTC(t time.Time) int {
	u := t.UTC()
	return u.Hour()*60 + u.Minute()
}

// derivedSchedules places the daily defragmentation and full snapshot of one etcd inside the window. The
// offset is a hash of the namespace and role rather than the window begin, so that the etcds of the many
// shoots sharing a maintenance window on one seed do not all snapshot in the same minute; it is stable, so
// repeated Deploys keep the schedule. The full snapshot runs half a window after the defragmentation so the
// two never compete.
func derivedSchedules(w MaintenanceWindow, namespace, role string) (defragmentation, fullSnapshot string, err error) {
	begin, length, err := w.window()
	if err != nil {
		return "", "", err
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + role))
	offset := int(h.Sum32() % uint32(length))
	return dailyCron(begin + offset), dailyCron(begin + (offset+length/2)%length), nil
}

func dailyCron(minuteOfDay int) string {
	m := minuteOfDay % (24 * 60)
	return fmt.Sprintf("%d %d * * *", m%60, m/60)
}

// everyNDays tells a five-field cron schedule whose day of month is */N with N > 1: Gardener's old
// defragmentation default, the one kind of existing schedule a Deploy replaces.
func everyNDays(schedule string) bool {
	fields := strings.Fields(schedule)
	if len(fields) != 5 {
		return false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(fields[2], "*/"))
	return strings.HasPrefix(fields[2], "*/") && err == nil && n > 1
}
