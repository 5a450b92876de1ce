// Package app holds etcdbrctl's subcommands. The one-shot tools (restore, snapshot, compact, copy) are
// thin: they bind flags shared with the sidecar (packages storeflags, etcdflags), open the stores and call
// the package that does the work (restorer, snapshotter, compactor, copier), so the logic is tested
// without a process and the flags are tested against the arguments druid renders.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
)

// ToolCommands are the one-shot subcommands: restore, snapshot, compact and copy.
func ToolCommands() []*cobra.Command {
	restore, _ := newRestoreCommand()
	snap, _ := newSnapshotCommand()
	compact, _ := newCompactCommand()
	cp, _ := newCopyCommand()
	return []*cobra.Command{restore, snap, compact, cp}
}

// toolLogger logs JSON lines to the command's stderr, as the sidecar does, so that Job logs read alike.
func toolLogger(cmd *cobra.Command) logr.Logger {
	return zap.New(zap.WriteTo(cmd.ErrOrStderr()), zap.JSONEncoder())
}

// openStore resolves a bound store's configuration and opens it.
func openStore(ctx context.Context, s *storeflags.Store, log logr.Logger) (snapstore.SnapStore, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	store, err := snapstore.New(ctx, cfg, log)
	if err != nil {
		return nil, fmt.Errorf("opening store %s %s/%s: %w", cfg.Provider, cfg.Container, cfg.Prefix, err)
	}
	return store, nil
}

// printJSON writes v as one JSON line to w: the result a script or test reads from stdout.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
