// Package minioserver runs MinIO (bin/minio, built from MinIO's Go module by `make tools`) as a child process
// for the tests that need what only MinIO serves here: its STS (AssumeRoleWithWebIdentity) against an
// OpenID issuer. The plain S3 tests run on versitygw (test/support/s3server).
package minioserver
