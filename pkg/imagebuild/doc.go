// Package imagebuild builds the project's OCI images without a container engine: each binary is compiled
// static for every platform, put on a small root filesystem of our own (a non-root user, CA certificates,
// a writable home and /tmp) and assembled with go-containerregistry into an OCI image index.
//
// The images are reproducible: the same source and toolchain give the same digests, because the binaries
// are built with -trimpath, every tar entry and the image config carry one fixed time (SOURCE_DATE_EPOCH,
// the commit time in `make images`), and the CA bundle comes from a pinned Go module instead of the build
// machine's trust store.
package imagebuild
