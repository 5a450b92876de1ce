// Command images builds the project's OCI images into OCI layouts (`make images`) and pushes them to a
// registry (`make push`), with no container engine: see pkg/imagebuild.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: images build|build-upstream|push|inspect [flags]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "bin/images", "directory of the OCI layouts, one per image")
	registry := fs.String("registry", "ghcr.io/gardener-etcd", "registry and path the images are named (and pushed) under")
	switch args[0] {
	case "build":
		opts := imagebuild.Options{ModuleDir: "."}
		fs.StringVar(&opts.Version, "version", "", "image tag and binary version (required)")
		fs.StringVar(&opts.Revision, "revision", "", "commit of the source (label)")
		fs.StringVar(&opts.Source, "source", "", "repository URL (label)")
		platforms := fs.String("platforms", "", `comma-separated platforms, e.g. linux/amd64,linux/arm64, or "host" (default: linux/amd64 and linux/arm64)`)
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		var err error
		if opts.Platforms, err = imagebuild.ParsePlatforms(*platforms); err != nil {
			return err
		}
		if opts.Version == "" {
			return errors.New("--version is required")
		}
		created, err := sourceDateEpoch()
		if err != nil {
			return err
		}
		opts.Created = created
		return build(ctx, opts, *dir, *registry)
	case "build-upstream":
		binDir := fs.String("bin-dir", "bin", "directory of the upstream binaries `make tools-upstream` linked")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return buildUpstream(ctx, *dir, *registry, *binDir)
	case "push":
		insecure := fs.Bool("insecure", false, "allow a registry over plain HTTP")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return push(ctx, *dir, *registry, *insecure)
	case "inspect":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return inspect(*dir)
	default:
		return fmt.Errorf("unknown command %q: build, build-upstream, push or inspect", args[0])
	}
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH, the reproducible-builds convention for the one time a build
// may record (`make images` sets the commit time).
func sourceDateEpoch() (time.Time, error) {
	value := os.Getenv("SOURCE_DATE_EPOCH")
	if value == "" {
		return time.Time{}, nil
	}
	seconds, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", value, err)
	}
	return time.Unix(seconds, 0), nil
}

func build(ctx context.Context, opts imagebuild.Options, dir, registry string) error {
	for i, bin := range imagebuild.Project {
		// Progress on stderr, so that stdout stays one "<image> <digest>" line per image.
		fmt.Fprintf(os.Stderr, ">> building image %d/%d: %s for %s\n", i+1, len(imagebuild.Project), bin.Name, platformList(opts.Platforms))
		index, err := imagebuild.Build(ctx, opts, bin)
		if err != nil {
			return err
		}
		if err := imagebuild.WriteLayout(filepath.Join(dir, bin.Name), index, opts.Version); err != nil {
			return err
		}
		digest, err := index.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s/%s:%s %s\n", registry, bin.Name, opts.Version, digest)
	}
	return nil
}

// buildUpstream writes the images of upstream's etcd-druid and etcd-backup-restore (imagebuild.Upstream)
// from the binaries in binDir, for the host's platform, tagged with upstream's versions.
func buildUpstream(ctx context.Context, dir, registry, binDir string) error {
	images, err := imagebuild.Upstream(".", binDir)
	if err != nil {
		return err
	}
	opts := imagebuild.Options{ModuleDir: ".", Platforms: []v1.Platform{imagebuild.HostPlatform()}}
	for _, bin := range images {
		if _, err := os.Stat(bin.Prebuilt); err != nil {
			return fmt.Errorf("%w: build it with `make tools-upstream`", err)
		}
		fmt.Fprintf(os.Stderr, ">> building image %s from %s\n", bin.Name, bin.Prebuilt)
		index, err := imagebuild.Build(ctx, opts, bin)
		if err != nil {
			return err
		}
		if err := imagebuild.WriteLayout(filepath.Join(dir, bin.Name), index, bin.Tag(opts)); err != nil {
			return err
		}
		digest, err := index.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s/%s:%s %s\n", registry, bin.Name, bin.Tag(opts), digest)
	}
	return nil
}

func platformList(platforms []v1.Platform) string {
	names := make([]string, len(platforms))
	for i, p := range platforms {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

func push(ctx context.Context, dir, registry string, insecure bool) error {
	for _, bin := range imagebuild.Project {
		index, tag, err := imagebuild.ReadLayout(filepath.Join(dir, bin.Name))
		if err != nil {
			return err
		}
		ref, err := imagebuild.Push(ctx, index, fmt.Sprintf("%s/%s:%s", registry, bin.Name, tag), insecure)
		if err != nil {
			return err
		}
		fmt.Println(ref)
	}
	return nil
}

// inspect prints, per image of the layouts, each platform's manifest digest, user, entrypoint and labels,
// and what each layer holds (its history entry: the root file system, extra binaries, the binary).
func inspect(dir string) error {
	for _, bin := range imagebuild.Project {
		index, tag, err := imagebuild.ReadLayout(filepath.Join(dir, bin.Name))
		if err != nil {
			return err
		}
		digest, err := index.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s:%s %s\n", bin.Name, tag, digest)
		manifest, err := index.IndexManifest()
		if err != nil {
			return err
		}
		for _, desc := range manifest.Manifests {
			img, err := index.Image(desc.Digest)
			if err != nil {
				return err
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				return err
			}
			fmt.Printf("  %s %s user=%s entrypoint=%v labels=%v\n", desc.Platform, desc.Digest, cfg.Config.User, cfg.Config.Entrypoint, cfg.Config.Labels)
			for _, h := range cfg.History {
				fmt.Printf("    layer: %s\n", h.CreatedBy)
			}
		}
	}
	return nil
}
