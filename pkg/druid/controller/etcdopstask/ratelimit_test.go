package etcdopstask

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// Of one Etcd, a kind starts at most once per MinInterval and any task at most once per half of it, so
// that alternating full and delta tasks make at most two snapshots per interval; other Etcds are not
// affected.
func TestStartsAllowed(t *testing.T) {
	g := NewWithT(t)
	const minInterval = time.Minute
	main, events := types.NamespacedName{Namespace: "shoot", Name: "etcd-main"}, types.NamespacedName{Namespace: "shoot", Name: "etcd-events"}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	full := taskStart{task: "full-1", etcd: main, kind: "a full snapshot", at: t0}
	starts := []taskStart{full}

	by, from, soon := tooSoon(starts, main, "a delta snapshot", t0.Add(29*time.Second), minInterval)
	g.Expect(soon).To(BeTrue(), "any kind waits half the interval")
	g.Expect(by).To(Equal(full))
	g.Expect(from).To(Equal(t0.Add(30 * time.Second)))
	_, _, soon = tooSoon(starts, main, "a delta snapshot", t0.Add(30*time.Second), minInterval)
	g.Expect(soon).To(BeFalse())
	_, _, soon = tooSoon(starts, events, "a full snapshot", t0, minInterval)
	g.Expect(soon).To(BeFalse(), "another Etcd")

	delta := taskStart{task: "delta-1", etcd: main, kind: "a delta snapshot", at: t0.Add(31 * time.Second)}
	starts = append(starts, delta)
	by, from, soon = tooSoon(starts, main, "a full snapshot", t0.Add(58*time.Second), minInterval)
	g.Expect(soon).To(BeTrue())
	g.Expect(by).To(Equal(delta), "the start that keeps it back longest")
	g.Expect(from).To(Equal(t0.Add(61 * time.Second)))
	by, from, soon = tooSoon(starts, main, "a final full snapshot", t0.Add(59*time.Second), minInterval)
	g.Expect(soon).To(BeTrue(), "a third kind does not make a third snapshot within the interval")
	g.Expect(by).To(Equal(delta))
	g.Expect(from).To(Equal(t0.Add(61 * time.Second)))
	by, from, soon = tooSoon(starts, main, "a delta snapshot", t0.Add(62*time.Second), minInterval)
	g.Expect(soon).To(BeTrue(), "a kind waits the whole interval")
	g.Expect(by).To(Equal(delta))
	g.Expect(from).To(Equal(t0.Add(91 * time.Second)))
	_, _, soon = tooSoon(starts, main, "a full snapshot", t0.Add(61*time.Second), minInterval)
	g.Expect(soon).To(BeFalse())
}

// The remembered starts shrink: recording a start forgets those that keep nothing back any more, such as
// the starts of an Etcd deleted since.
func TestRecordStartForgetsOldStarts(t *testing.T) {
	g := NewWithT(t)
	const minInterval = time.Minute
	gone, main := types.NamespacedName{Namespace: "old", Name: "etcd-main"}, types.NamespacedName{Namespace: "shoot", Name: "etcd-main"}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	started := map[startKey]time.Time{}
	recordStart(started, gone, "a full snapshot", t0, minInterval)
	recordStart(started, main, "a delta snapshot", t0.Add(30*time.Second), minInterval)
	g.Expect(started).To(HaveLen(2))

	recordStart(started, main, "a full snapshot", t0.Add(time.Minute), minInterval)
	g.Expect(started).To(Equal(map[startKey]time.Time{
		{etcd: main, kind: "a delta snapshot"}: t0.Add(30 * time.Second),
		{etcd: main, kind: "a full snapshot"}:  t0.Add(time.Minute),
	}))
	g.Expect(rememberedStarts(started)).To(ContainElement(taskStart{task: "(since deleted)", etcd: main, kind: "a full snapshot", at: t0.Add(time.Minute)}))
}
