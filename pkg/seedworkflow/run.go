package seedworkflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
)

// Options configure a demo run.
type Options struct {
	// StateDir of the local seed (see localseed.Options).
	StateDir string
	// Nodes is the number of nodes (at least 3 for the scale-up: one member per zone).
	Nodes int
	// Timeout bounds each wait.
	Timeout time.Duration
	// Keys is how many keys are written into etcd-main.
	Keys int
	// Out receives the progress and the summary.
	Out io.Writer
	// Log receives the structured logs of the seed and the components.
	Log logr.Logger
	// NetworkPolicies makes the seed a Gardener seed as far as the network goes: the nodes enforce
	// NetworkPolicies and Gardener's NetworkPolicy controllers write the seed's (localseed.Options).
	NetworkPolicies bool
}

// StartSeed starts a local seed with S3 and pushes the images of `make images` (bin/images) to its
// registry (Seed.Images), which druid and the extension then run by digest, and those of upstream's
// components that bin/images holds (`make images-upstream`, Seed.PushUpstreamImages).
func StartSeed(ctx context.Context, opts Options) (*localseed.Seed, error) {
	binDir, err := localseed.DefaultBinDir()
	if err != nil {
		return nil, err
	}
	seed, err := localseed.Start(ctx, localseed.Options{StateDir: opts.StateDir, Nodes: opts.Nodes, S3: true,
		NetworkPolicies: opts.NetworkPolicies, BinDir: binDir, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	if err := seed.PushProjectImages(ctx, filepath.Join(binDir, "images")); err != nil {
		return nil, errors.Join(err, seed.Stop(context.WithoutCancel(ctx)))
	}
	if _, err := seed.PushUpstreamImages(ctx, filepath.Join(binDir, "images")); err != nil {
		return nil, errors.Join(err, seed.Stop(context.WithoutCancel(ctx)))
	}
	return seed, nil
}

// Run starts the seed and runs every step. It returns the Env (nil when the seed did not start) also on
// error, with the seed still running: the caller prints what it needs and stops the seed.
func Run(ctx context.Context, opts Options) (*Env, *Timer, error) {
	if opts.Keys == 0 {
		opts.Keys = 100
	}
	t := &Timer{Out: opts.Out}
	var env *Env
	err := t.Run("start the local seed (control plane, S3, nodes, registry with the project's images)", func() (string, error) {
		seed, err := StartSeed(ctx, opts)
		if err != nil {
			return "", err
		}
		env, err = NewEnv(seed, opts.Timeout)
		if err != nil {
			return "", errors.Join(err, seed.Stop(context.WithoutCancel(ctx)))
		}
		return fmt.Sprintf("nodes %s, API server https://%s:6443, S3 %s", strings.Join(seed.NodeNames(), ", "),
			seed.BridgeIP(), seed.S3().Endpoint), nil
	})
	if err != nil {
		return nil, t, err
	}
	return env, t, RunSteps(ctx, env, t, opts.Keys)
}

// RunSteps runs the workflow on a started seed.
func RunSteps(ctx context.Context, env *Env, t *Timer, keys int) error {
	steps := []struct {
		name string
		fn   func(ctx context.Context, env *Env) (string, error)
	}{
		{"bootstrap etcd-druid (chart, pod)", BootstrapDruid},
		{"bootstrap the backup extension (chart, pod)", BootstrapBackupExtension},
		{"create the shoot namespace, BackupBucket and BackupEntry", CreateShoot},
		{"deploy etcd-main (1 member, backed up) and etcd-events", DeployEtcds},
		{fmt.Sprintf("write %d keys into etcd-main over TLS", keys), func(ctx context.Context, env *Env) (string, error) {
			return WriteData(ctx, env, etcd.RoleMain, keys)
		}},
		{"scale etcd-main to 3 members with peer TLS", func(ctx context.Context, env *Env) (string, error) {
			return ScaleMain(ctx, env, 3)
		}},
		{"check the keys on the 3 members", func(ctx context.Context, env *Env) (string, error) {
			return CheckData(ctx, env, etcd.RoleMain, keys)
		}},
		{"take a full snapshot of etcd-main", Snapshot},
	}
	for _, s := range steps {
		if err := t.Run(s.name, func() (string, error) { return s.fn(ctx, env) }); err != nil {
			return err
		}
	}
	return nil
}

// CheckData asks every member of role, one at a time, for the number of keys WriteData wrote (linearizable,
// so a member answers only once it caught up with the leader) and fails unless each has at least want.
func CheckData(ctx context.Context, env *Env, role string, want int) (string, error) {
	ips, err := MemberIPs(ctx, env, role)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, env.Timeout)
	defer cancel()
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(ips)) {
		cli, err := EtcdClientFor(ctx, env, role, "https://"+net.JoinHostPort(ips[name], strconv.Itoa(clientPort)))
		if err != nil {
			return "", err
		}
		count, err := CountKeys(ctx, cli)
		_ = cli.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if count < int64(want) {
			return "", fmt.Errorf("%s has %d keys, %d were written", name, count, want)
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, count))
	}
	return "keys per member: " + strings.Join(parts, ", "), nil
}
