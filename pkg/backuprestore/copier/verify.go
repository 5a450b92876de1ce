package copier

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

var errUploadEnded = errors.New("upload ended before the object was read")

// copyVerified streams src's object to dst's key. The bytes are copied unchanged (still compressed)
// while a second reader decompresses them and checks the checksum trailer; the upload sees EOF only
// once the check passed, so a corrupted object is never completed in the target.
func copyVerified(ctx context.Context, source, target snapstore.SnapStore, src, dst *snapshot.Snapshot) (int64, error) {
	rc, err := source.Fetch(ctx, src)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	result := make(chan error, 1)
	go func() {
		err := verify(pr, src)
		if err == nil {
			_, err = io.Copy(io.Discard, pr) // bytes after the codec's end belong to nothing; drain them
		}
		pr.CloseWithError(errors.Join(err, errUploadEnded))
		result <- err
	}()
	body := &verifiedReader{src: io.TeeReader(rc, pw), pw: pw, result: result}
	err = target.Save(ctx, dst, body)
	body.finish(errUploadEnded)
	if err != nil {
		return body.n, err
	}
	return body.n, body.verr
}

// verify reads one object's stored bytes to the end and checks them like a restore would.
func verify(r io.Reader, snap *snapshot.Snapshot) error {
	if snap.Kind == snapshot.KindFull {
		full, err := snapshotformat.OpenFull(r, snap, false)
		if err != nil {
			return err
		}
		defer full.Close()
		_, err = io.Copy(io.Discard, full)
		return err
	}
	_, err := snapshotformat.OpenDelta(r, snap, 0)
	return err
}

// verifiedReader passes the source bytes to the upload and replaces the final EOF by the verifier's
// verdict.
type verifiedReader struct {
	src    io.Reader
	pw     *io.PipeWriter
	result chan error
	n      int64

	once sync.Once
	verr error
}

func (v *verifiedReader) Read(p []byte) (int, error) {
	n, err := v.src.Read(p)
	v.n += int64(n)
	if err == io.EOF {
		v.finish(nil)
		if v.verr != nil {
			return n, v.verr
		}
	} else if err != nil {
		v.finish(err)
	}
	return n, err
}

// finish ends the verifier's input (cause nil: the source ended) and collects its verdict, once.
func (v *verifiedReader) finish(cause error) {
	v.once.Do(func() {
		if cause == nil {
			_ = v.pw.Close()
		} else {
			_ = v.pw.CloseWithError(cause)
		}
		v.verr = <-v.result
	})
}
