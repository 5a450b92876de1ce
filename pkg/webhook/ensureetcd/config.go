// Package ensureetcd is the backup extension's mutating webhook for the Gardener-owned Etcd resources
// (etcd-main, etcd-events). Gardener writes them cloud-agnostically; the provider extension knows which
// storage class exists in its seeds and how large the volumes should be, so it adds those defaults here
// instead of hijacking the StatefulSet as extensions did before druid.
package ensureetcd

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Names of the Etcds Gardener deploys per shoot control plane; only these are mutated.
const (
	EtcdMainName   = "etcd-main"
	EtcdEventsName = "etcd-events"
)

// RoleDefaults are the provider defaults of one etcd role.
type RoleDefaults struct {
	// StorageClassName is written on creation (the field is immutable afterwards); empty leaves it alone.
	StorageClassName string
	// StorageCapacity is the minimum volume size; a larger capacity already on the object is kept.
	StorageCapacity *resource.Quantity
}

// Config holds the defaults per Etcd name.
type Config struct {
	// Main applies to etcd-main.
	Main RoleDefaults
	// Events applies to etcd-events.
	Events RoleDefaults
}

// For returns the defaults of the named Etcd and whether the webhook handles that name at all.
func (c Config) For(name string) (RoleDefaults, bool) {
	switch name {
	case EtcdMainName:
		return c.Main, true
	case EtcdEventsName:
		return c.Events, true
	}
	return RoleDefaults{}, false
}

// Validate rejects negative or zero capacities, which would make every Etcd unschedulable.
func (c Config) Validate() error {
	for name, d := range map[string]RoleDefaults{EtcdMainName: c.Main, EtcdEventsName: c.Events} {
		if d.StorageCapacity != nil && d.StorageCapacity.Sign() <= 0 {
			return fmt.Errorf("storage capacity of %s must be positive, got %s", name, d.StorageCapacity)
		}
	}
	return nil
}
