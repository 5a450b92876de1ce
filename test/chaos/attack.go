package chaos

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/support/podnettest"
)

// attack is one unauthenticated call of the security review's findings on a state-changing endpoint.
type attack struct {
	port         int32
	method, path string
}

// attacks are the endpoints of the sidecar and the wrapper refused to callers without credentials:
// wiping a member (/initialization/start then /stop), consuming its initialization status, listing the
// store.
var attacks = []attack{
	{etcdpod.DefaultBackupPort, http.MethodGet, "/initialization/start"},
	{etcdpod.DefaultBackupPort, http.MethodGet, "/initialization/status"},
	{etcdpod.DefaultBackupPort, http.MethodGet, "/snapshot/latest"},
	{etcdpod.DefaultWrapperPort, http.MethodPost, "/stop"},
}

// triggers are the snapshot triggers, served to callers without credentials (gardenlet's final snapshot
// comes without a client certificate) but rate-limited: a burst must end in 429 within the budget. The
// final variant is not fired: a stray final snapshot misleads a later copy of the backups.
var triggers = []attack{
	{etcdpod.DefaultBackupPort, http.MethodGet, "/snapshot/full"},
	{etcdpod.DefaultBackupPort, http.MethodGet, "/snapshot/delta"},
}

// triggerBurst is how many triggers of one kind a member may serve a caller without credentials before
// it must answer 429 (httpapi.DefaultTriggerLimit's burst, plus one token refilled meanwhile).
var triggerBurst = httpapi.DefaultTriggerLimit.Burst + 1

// reachable are read-only endpoints that must answer the caller 200: proof that the refusals above come
// from the servers, not from a network that does not reach them.
var reachable = []attack{
	{etcdpod.DefaultBackupPort, http.MethodGet, "/healthz"},
	{etcdpod.DefaultWrapperPort, http.MethodGet, "/readyz"},
}

// attackEndpoints replays the attacks on every member from another pod's network namespace on the seed's
// bridge, without credentials: every call must get 401 or 403, and nothing may change — no container
// restarted, no pod recreated, the same etcd member IDs, no new full snapshot in the store. Then it fires
// bursts of snapshot triggers: each burst must end in 429 within triggerBurst calls, no container or
// member may change, and the store may gain at most one full snapshot per trigger served.
func attackEndpoints(ctx context.Context, r *Round) (string, error) {
	s := r.Suite
	ns, err := s.Seed.AddCallerNamespace(ctx, "attacker")
	if err != nil {
		return "", err
	}
	defer func() { _ = s.Seed.RemoveCallerNamespace(context.WithoutCancel(ctx), ns) }()
	caller := podnettest.FromNamespace(ns, netip.MustParseAddr(s.Seed.BridgeIP()))
	begin := time.Now()
	before, err := s.attackState(ctx)
	if err != nil {
		return "", err
	}
	ips, err := seedworkflow.MemberIPs(ctx, s.Env, etcd.RoleMain)
	if err != nil {
		return "", err
	}
	var errs []error
	calls := 0
	for _, name := range slices.Sorted(maps.Keys(ips)) {
		for _, a := range reachable {
			if code, err := call(ctx, caller, ips[name], a); err != nil || code != http.StatusOK {
				errs = append(errs, fmt.Errorf("%s %s on %s: %d %v (must answer 200: the caller must reach the member)", a.method, a.path, name, code, err))
			}
		}
		for _, a := range attacks {
			calls++
			code, err := call(ctx, caller, ips[name], a)
			if err != nil || (code != http.StatusUnauthorized && code != http.StatusForbidden) {
				errs = append(errs, fmt.Errorf("%s %s on %s from %s: %d %v (want 401 or 403)", a.method, a.path, name, ns.IP, code, err))
			}
		}
	}
	r.Note("%d unauthenticated calls from %s refused", calls-len(errs), ns.IP)
	after, err := s.attackState(ctx)
	if err != nil {
		return "", err
	}
	noted := false
	compacted := func() bool {
		// The round started without one (Quiet), but druid may start a Job at any time; its compacted full
		// snapshot is no attack's.
		if !s.compactions.startedSince(begin) {
			return false
		}
		if !noted {
			r.Note("a compaction Job ran meanwhile: full snapshots not compared")
			noted = true
		}
		return true
	}
	if compacted() {
		after.fulls = before.fulls
	}
	if changed := before.diff(after); changed != "" {
		errs = append(errs, fmt.Errorf("the attacks changed something: %s", changed))
	}

	served, terrs := burstTriggers(ctx, caller, ips)
	errs = append(errs, terrs...)
	r.Note("%d snapshot triggers from %s served before 429", served, ns.IP)
	final, err := s.attackState(ctx)
	if err != nil {
		return "", err
	}
	if grown := len(final.fulls) - len(after.fulls); grown > served && !compacted() {
		errs = append(errs, fmt.Errorf("%d full snapshots appeared for %d triggers served", grown, served))
	}
	final.fulls = after.fulls
	if changed := after.diff(final); changed != "" {
		errs = append(errs, fmt.Errorf("the snapshot triggers changed something: %s", changed))
	}
	return fmt.Sprintf("%d members", len(ips)), errors.Join(errs...)
}

// burstTriggers fires each trigger at every member until it answers 429; it returns how many were served
// and an error for every burst that was not limited within triggerBurst calls or got another answer.
func burstTriggers(ctx context.Context, caller *podnettest.Caller, ips map[string]string) (int, []error) {
	var errs []error
	served := 0
	for _, name := range slices.Sorted(maps.Keys(ips)) {
		for _, a := range triggers {
			limited := false
			for i := 0; i <= triggerBurst && !limited; i++ {
				code, err := call(ctx, caller, ips[name], a)
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("%s %s on %s: %w", a.method, a.path, name, err))
					limited = true
				case code == http.StatusTooManyRequests:
					limited = true
				case code == http.StatusOK:
					served++
				default:
					errs = append(errs, fmt.Errorf("%s %s on %s: %d (want 200 within the budget, then 429)", a.method, a.path, name, code))
					limited = true
				}
			}
			if !limited {
				errs = append(errs, fmt.Errorf("%s %s on %s: no 429 after %d triggers", a.method, a.path, name, triggerBurst+1))
			}
		}
	}
	return served, errs
}

// call makes one request from the caller: https first (the sidecar serves TLS when the Etcd has backup
// TLS), plain http when the server answers in plain text. The caller has no client certificate and does
// not verify the server: an attacker would not.
func call(ctx context.Context, caller *podnettest.Caller, ip string, a attack) (int, error) {
	hc := caller.HTTPClient(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the attacker trusts anything
	host := net.JoinHostPort(ip, strconv.Itoa(int(a.port)))
	code, err := do(ctx, hc, a.method, "https://"+host+a.path)
	if err != nil && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		code, err = do(ctx, hc, a.method, "http://"+host+a.path)
	}
	return code, err
}

func do(ctx context.Context, hc *http.Client, method, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// attackState is what an attack must not change.
type attackState struct {
	pods      map[string]podState
	memberIDs []string
	fulls     []string
}

func (s *Suite) attackState(ctx context.Context) (attackState, error) {
	var st attackState
	var err error
	if st.pods, err = s.snapshotPods(ctx); err != nil {
		return st, err
	}
	cli, err := seedworkflow.EtcdClient(ctx, s.Env, etcd.RoleMain)
	if err != nil {
		return st, err
	}
	defer cli.Close()
	members, err := cli.MemberList(ctx)
	if err != nil {
		return st, err
	}
	for _, m := range members.Members {
		st.memberIDs = append(st.memberIDs, fmt.Sprintf("%s=%x", m.Name, m.ID))
	}
	slices.Sort(st.memberIDs)
	err = filepath.WalkDir(s.Seed.S3().Dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "Full-") {
			st.fulls = append(st.fulls, path)
		}
		return err
	})
	return st, err
}

func (a attackState) diff(b attackState) string {
	var out []string
	if changes := podChanges(a.pods, b.pods); len(changes) > 0 {
		out = append(out, strings.Join(changes, ", "))
	}
	if !slices.Equal(a.memberIDs, b.memberIDs) {
		out = append(out, fmt.Sprintf("members %v → %v", a.memberIDs, b.memberIDs))
	}
	if !slices.Equal(a.fulls, b.fulls) {
		out = append(out, fmt.Sprintf("full snapshots %d → %d", len(a.fulls), len(b.fulls)))
	}
	return strings.Join(out, "; ")
}
