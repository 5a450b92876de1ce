//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// writer is a client that keeps writing while a scenario disturbs the cluster. It records every key whose
// Put was acknowledged: those must survive whatever the scenario does. A failed Put is not an error (the
// cluster may be restarting a member); the writer reconnects to the members' current pod IPs and goes on.
type writer struct {
	env    *seedworkflow.Env
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

// writePace spaces the writes: about 20 a second keep every member busy without starving the two cores.
const writePace = 50 * time.Millisecond

// startWriter starts writing keys <prefix>NNNNNNN into role's etcd until stop.
func startWriter(ctx context.Context, env *seedworkflow.Env, role, prefix string) *writer {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &writer{env: env, role: role, prefix: prefix, cancel: cancel, done: make(chan struct{}), lastAck: time.Now()}
	go w.run(ctx)
	return w
}

func (w *writer) run(ctx context.Context) {
	defer close(w.done)
	var cli *clientv3.Client
	defer func() {
		if cli != nil {
			_ = cli.Close()
		}
	}()
	tick := time.NewTicker(writePace)
	defer tick.Stop()
	for i := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if cli == nil {
			var err error
			if cli, err = seedworkflow.EtcdClient(ctx, w.env, w.role); err != nil {
				w.failed()
				continue
			}
		}
		key := fmt.Sprintf("%s%07d", w.prefix, i)
		putCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := cli.Put(putCtx, key, "written by the e2e writer")
		cancel()
		if err != nil {
			// The key may or may not have been stored; it is not counted. Reconnect: a restarted member
			// may have a new pod IP.
			w.failed()
			_ = cli.Close()
			cli = nil
			i++
			continue
		}
		w.ack(key)
		i++
	}
}

func (w *writer) ack(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.longest = max(w.longest, now.Sub(w.lastAck))
	w.lastAck = now
	w.acked = append(w.acked, key)
}

func (w *writer) failed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failures++
}

// ackedCount is the number of acknowledged writes so far.
func (w *writer) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// stop ends the writer and returns the acknowledged keys, the number of failed attempts and the longest
// time without an acknowledgement.
func (w *writer) stop() (acked []string, failures int, longestGap time.Duration) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...), w.failures, w.longest
}
