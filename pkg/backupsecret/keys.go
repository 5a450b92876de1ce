package backupsecret

// KeyBucketName is added by Gardener's BackupEntry controller to every backup secret; the sidecar takes it
// as the container when none is configured.
const KeyBucketName = "bucketName"

// Local.
const (
	// KeyHostPath names the node directory holding the Local provider's buckets; optional (druid falls back
	// to DefaultLocalHostPath).
	KeyHostPath = "hostPath"
)

// Keys shared by the S3-compatible providers (S3, ECS, OCS) and OSS.
const (
	KeyAccessKeyID        = "accessKeyID"
	KeySecretAccessKey    = "secretAccessKey"
	KeyRegion             = "region"
	KeyEndpoint           = "endpoint"
	KeyInsecureSkipVerify = "insecureSkipVerify"
)

// S3 only.
const (
	KeyS3ForcePathStyle = "s3ForcePathStyle"
	KeyTrustedCACert    = "trustedCaCert"
)

// Workload identity (upstream etcd-backup-restore's keys, written by Gardener's provider extensions for a
// BackupEntry whose credentials are a WorkloadIdentity). KeyToken is the subject token, a file of the
// mounted secret that Gardener's token requestor rewrites before it expires; the sidecar reads it anew on
// every exchange.
const (
	// KeyToken is the web identity (OIDC) token of the shoot's workload identity.
	KeyToken = "token"
	// KeyRoleARN is the IAM role S3 assumes with the token (STS AssumeRoleWithWebIdentity).
	KeyRoleARN = "roleARN"
	// KeyCredentialsConfig is GCS's external_account credential configuration; Gardener copies it into
	// KeyServiceAccount, the file the sidecar reads.
	KeyCredentialsConfig = "credentialsConfig"
	// KeyProjectID is the GCS project of an external_account configuration.
	KeyProjectID = "projectID"
)

// ECS and OCS: KeyDisableSSL switches to plain HTTP (the upstream sidecar's OCS secret key, also accepted
// for ECS).
const KeyDisableSSL = "disableSSL"

// ABS.
const (
	KeyStorageAccount = "storageAccount"
	KeyStorageKey     = "storageKey"
	KeyDomain         = "domain"
)

// GCS: a service account key file, or an external_account credential configuration (workload identity).
const KeyServiceAccount = "serviceaccount.json"

// Swift: Keystone v3 credentials, by password or by application credential.
const (
	KeyAuthURL                     = "authURL"
	KeyDomainName                  = "domainName"
	KeyTenantName                  = "tenantName"
	KeyUsername                    = "username"
	KeyPassword                    = "password"
	KeyApplicationCredentialID     = "applicationCredentialID"
	KeyApplicationCredentialName   = "applicationCredentialName"
	KeyApplicationCredentialSecret = "applicationCredentialSecret"
)

// OSS: the endpoint (e.g. oss-eu-central-1.aliyuncs.com) and an AccessKey pair (with KeyAccessKeyID).
const (
	KeyStorageEndpoint = "storageEndpoint"
	KeyAccessKeySecret = "accessKeySecret"
)
