// Package s3server runs a real S3 server (versitygw with its POSIX backend, built into bin/ by
// hack/tools/install.sh) on 127.0.0.1 for tests, so storage code is exercised against the S3 protocol
// rather than a mock. Every server gets a free port and a private backend directory and is stopped,
// and its directory removed, when the test ends.
package s3server
