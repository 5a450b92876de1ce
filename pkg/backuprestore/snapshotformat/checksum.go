package snapshotformat

import (
	"crypto/sha256"
	"errors"
)

// checksumSize is the length of the sha256 trailer of both snapshot formats.
const checksumSize = sha256.Size

// ErrChecksumMismatch reports contents whose trailer does not match them: the object was corrupted
// after it was written (or truncated). Errors wrap it together with the object's name.
var ErrChecksumMismatch = errors.New("sha256 checksum mismatch")

// ErrTruncated reports contents too short to even hold the checksum trailer.
var ErrTruncated = errors.New("shorter than its sha256 trailer")
