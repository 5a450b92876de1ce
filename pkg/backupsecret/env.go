package backupsecret

import druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"

// CredentialsEnv names, per canonical provider, the environment variable that holds the path of the
// mounted backup secret, as upstream druid sets it and the upstream sidecar reads it. GCS's variable
// points at the serviceaccount.json file inside the directory. ECS has none: see ECSKeyEnv.
var CredentialsEnv = map[druidv1alpha1.StorageProvider]string{
	druidv1alpha1.StorageProviderS3:    "AWS_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderABS:   "AZURE_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderGCS:   "GOOGLE_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderSwift: "OPENSTACK_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderOSS:   "ALICLOUD_APPLICATION_CREDENTIALS",
	druidv1alpha1.StorageProviderOCS:   "OPENSHIFT_APPLICATION_CREDENTIALS",
}

// EnvKey is a backup secret key handed to the sidecar as an environment variable of its own.
type EnvKey struct {
	Env, Key string
	// Optional keys may be absent from the secret (the variable is then unset).
	Optional bool
}

// ECSKeyEnv are the variables through which upstream druid hands an ECS store its credentials (from
// the backup secret's keys, one variable each) and the upstream sidecar reads them; there is no
// credentials directory variable for ECS.
var ECSKeyEnv = []EnvKey{
	{Env: "ECS_ENDPOINT", Key: KeyEndpoint},
	{Env: "ECS_ACCESS_KEY_ID", Key: KeyAccessKeyID},
	{Env: "ECS_SECRET_ACCESS_KEY", Key: KeySecretAccessKey},
	{Env: "ECS_DISABLE_SSL", Key: KeyDisableSSL, Optional: true},
	{Env: "ECS_INSECURE_SKIP_VERIFY", Key: KeyInsecureSkipVerify, Optional: true},
}
