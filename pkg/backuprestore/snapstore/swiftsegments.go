package snapstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"golang.org/x/sync/errgroup"
)

// swiftMaxManifestBytes bounds the manifest read back before a delete (Swift's max_manifest_size is
// 8 MiB by default).
const swiftMaxManifestBytes = 64 << 20

// segmentsOf returns the segments of the object at key in this container: those its Static Large Object
// manifest lists, or, for a Dynamic Large Object as the upstream sidecar wrote them (manifest
// "<container>/<key>", segments "<key>/0000000001"...), the objects below "<key>/". A plain or missing
// object has none. Segments in other containers, or of a dynamic manifest naming another prefix, are not
// this store's to delete and are left alone.
func (s *swiftStore) segmentsOf(ctx context.Context, key string) ([]string, error) {
	head, err := objects.Get(ctx, s.client, s.container, key, nil).Extract()
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap(err, "reading the metadata of", key)
	}
	switch {
	case head.StaticLargeObject:
		return s.staticSegments(ctx, key)
	case head.ObjectManifest == s.container+"/"+key:
		return s.listNames(ctx, key+"/")
	case head.ObjectManifest != "":
		s.log.Info("Leaving the segments of a dynamic large object alone: they are not below its key", "key", key, "manifest", head.ObjectManifest)
	}
	return nil, nil
}

// staticSegments reads the manifest of a Static Large Object.
func (s *swiftStore) staticSegments(ctx context.Context, key string) ([]string, error) {
	res := objects.Download(ctx, s.client, s.container, key, objects.DownloadOpts{MultipartManifest: "get"})
	if res.Err != nil {
		return nil, s.wrap(res.Err, "reading the manifest of", key)
	}
	defer res.Body.Close()
	var entries []struct {
		Name string `json:"name"` // "/<container>/<object>"
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, swiftMaxManifestBytes)).Decode(&entries); err != nil {
		return nil, fmt.Errorf("decoding the manifest of %s in Swift container %s: %w", key, s.container, err)
	}
	ours := "/" + s.container + "/"
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name, ours)
		if !ok {
			s.log.Info("Leaving a segment of another container alone", "key", key, "segment", e.Name)
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

// listNames returns every object name below prefix.
func (s *swiftStore) listNames(ctx context.Context, prefix string) ([]string, error) {
	var names []string
	err := objects.List(s.client, s.container, objects.ListOpts{Prefix: prefix, Limit: s.listLimit}).EachPage(ctx,
		func(_ context.Context, page pagination.Page) (bool, error) {
			infos, err := objects.ExtractInfo(page)
			for _, info := range infos {
				names = append(names, info.Name)
			}
			return err == nil, err
		})
	if err != nil {
		return nil, fmt.Errorf("listing %s in Swift container %s: %w", prefix, s.container, err)
	}
	return names, nil
}

// deleteObjects deletes the objects, MaxParallelChunks at a time, trying every one of them; missing
// objects are no error.
func (s *swiftStore) deleteObjects(ctx context.Context, keys []string) error {
	var g errgroup.Group
	g.SetLimit(s.upload.MaxParallelChunks)
	errs := make([]error, len(keys))
	for i, key := range keys {
		g.Go(func() error {
			errs[i] = s.deleteObject(ctx, key)
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}
