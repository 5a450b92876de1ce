// Package storeflags binds the command-line flags and environment variables that locate an object store
// (--storage-provider, --store-container, --store-prefix, --store-endpoint-override, the provider's
// credentials variable such as AWS_APPLICATION_CREDENTIALS, for ECS the variables ECS_ENDPOINT, … holding
// the secret's keys; see package backupsecret) to a snapstore.Config.
//
// Every etcdbrctl subcommand that touches a store (server, snapshot, restore, compact, copy) binds them
// here, so that the arguments druid renders for the sidecar and its Jobs
// (pkg/druid/storeaccess.StoreLocationArgs and StoreCredentialsEnv) mean the same thing
// everywhere. `etcdbrctl copy` binds a second set with the flag prefix "source-" and the variable prefix
// "SOURCE_" for the store it reads from.
package storeflags
