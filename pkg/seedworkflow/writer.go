package seedworkflow

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Writer is a client that keeps writing while a scenario disturbs the cluster (the e2e suite, the chaos
// suite). It records every key whose Put was acknowledged: those must survive whatever the scenario does.
// A failed Put is not an error (the cluster may be restarting a member); the writer goes on, reconnecting
// when the members' pod IPs changed. When the apiserver cannot be asked for them (an apiserver outage) it
// keeps its client, whose endpoints still reach the members.
type Writer struct {
	env    *Env
	role   string
	prefix string

	mu       sync.Mutex
	acked    []string
	lastAck  time.Time
	longest  time.Duration // longest time between two acknowledgements
	failures int

	cancel context.CancelFunc
	done   chan struct{}
}

// WritePace spaces the writes: about 20 a second keep every member busy without starving the two cores.
const WritePace = 50 * time.Millisecond

// writeTimeout bounds one Put; a Put that takes longer counts as failed (it may still have been stored).
const writeTimeout = 5 * time.Second

// StartWriter starts writing keys <prefix>NNNNNNN into role's etcd until Stop.
func StartWriter(ctx context.Context, env *Env, role, prefix string) *Writer {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &Writer{env: env, role: role, prefix: prefix, cancel: cancel, done: make(chan struct{}), lastAck: time.Now()}
	go w.run(ctx)
	return w
}

func (w *Writer) run(ctx context.Context) {
	defer close(w.done)
	var cli *clientv3.Client
	var ips map[string]string
	defer func() {
		if cli != nil {
			_ = cli.Close()
		}
	}()
	tick := time.NewTicker(WritePace)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if cli == nil {
			var err error
			if ips, err = MemberIPs(ctx, w.env, w.role); err != nil {
				w.failed()
				continue
			}
			if cli, err = EtcdClient(ctx, w.env, w.role); err != nil {
				w.failed()
				continue
			}
		}
		key := fmt.Sprintf("%s%07d", w.prefix, i)
		putCtx, cancel := context.WithTimeout(ctx, writeTimeout)
		_, err := cli.Put(putCtx, key, "written by the writer of the seed workflow")
		cancel()
		if err != nil {
			// The key may or may not have been stored; it is not counted. A recreated member may have a
			// new pod IP: reconnect then.
			w.failed()
			if now, err := MemberIPs(ctx, w.env, w.role); err == nil && !maps.Equal(now, ips) {
				_ = cli.Close()
				cli = nil
			}
			continue
		}
		w.ack(key)
	}
}

func (w *Writer) ack(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.longest = max(w.longest, now.Sub(w.lastAck))
	w.lastAck = now
	w.acked = append(w.acked, key)
}

func (w *Writer) failed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures++
}

// AckedCount is the number of acknowledged writes so far.
func (w *Writer) AckedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// Acked returns the keys acknowledged so far (the writer goes on).
func (w *Writer) Acked() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

// Failures is the number of failed attempts so far.
func (w *Writer) Failures() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failures
}

// Stop ends the writer and returns the acknowledged keys, the number of failed attempts and the longest
// time without an acknowledgement.
func (w *Writer) Stop() (acked []string, failures int, longestGap time.Duration) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...), w.failures, w.longest
}
