// Package benchproc measures the process a benchmark side runs in: its peak resident set size and
// what it consists of. Each side of a benchmark runs in its own process (the test binary, re-executed)
// so that these figures are its own.
package benchproc

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Status reads the given fields of /proc/self/status, in KiB.
func Status(fields ...string) (map[string]int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(fields))
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for _, f := range fields {
			if name == f {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("/proc/self/status %s: %w", name, err)
				}
				out[name] = kb
			}
		}
	}
	for _, f := range fields {
		if _, ok := out[f]; !ok {
			return nil, fmt.Errorf("/proc/self/status has no %s", f)
		}
	}
	return out, nil
}

// PeakRSSMiB is this process's high-water resident set size (VmHWM): anonymous memory (the Go heap,
// stacks, runtime) plus the file pages it has mapped and touched (an mmap'd bbolt database).
func PeakRSSMiB() (float64, error) {
	s, err := Status("VmHWM")
	if err != nil {
		return 0, err
	}
	return float64(s["VmHWM"]) / 1024, nil
}

// Peaks are the high-water marks a Sampler saw, in MiB. The kernel keeps only the peak of the whole
// RSS (VmHWM); the peaks of its parts are sampled and may miss a short spike.
type Peaks struct {
	RSS     float64 // VmHWM, exact
	Anon    float64 // RssAnon: heap, stacks, runtime
	File    float64 // RssFile: touched pages of mapped files
	GoHeap  float64 // Go heap objects (live and not yet swept)
	Samples int
}

// Sampler records the peaks of the parts of this process's RSS until it is stopped.
type Sampler struct {
	stop  chan struct{}
	done  sync.WaitGroup
	peaks Peaks
}

// StartSampler samples every interval.
func StartSampler(interval time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

var heapObjects = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func (s *Sampler) sample() {
	st, err := Status("RssAnon", "RssFile")
	if err != nil {
		return
	}
	metrics.Read(heapObjects)
	s.peaks.Anon = max(s.peaks.Anon, float64(st["RssAnon"])/1024)
	s.peaks.File = max(s.peaks.File, float64(st["RssFile"])/1024)
	s.peaks.GoHeap = max(s.peaks.GoHeap, float64(heapObjects[0].Value.Uint64())/(1<<20))
	s.peaks.Samples++
}

// Stop ends the sampling and returns the peaks, VmHWM included.
func (s *Sampler) Stop() (Peaks, error) {
	close(s.stop)
	s.done.Wait()
	s.sample()
	rss, err := PeakRSSMiB()
	s.peaks.RSS = rss
	return s.peaks, err
}

// CPUSeconds is the user + system time this process has used so far.
func CPUSeconds() (float64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), nil
}
