package imagebuild

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one file or directory (path ending in "/") of a layer.
type entry struct {
	path string
	mode int64
	uid  int
	data []byte
}

// layerOf writes the entries, in the order given, as a tar with every header field fixed (times, owner
// names, format), so that the layer's digest depends on the entries alone.
func layerOf(entries []entry, modTime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{
			Name: e.path, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: modTime, Format: tar.FormatPAX,
			Typeflag: tar.TypeReg, Size: int64(len(e.data)),
		}
		if strings.HasSuffix(e.path, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
