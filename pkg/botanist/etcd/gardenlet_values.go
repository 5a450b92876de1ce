package etcd

// Purpose is a shoot's purpose as Gardener names it (spec.purpose).
type Purpose string

// Purposes whose important etcd the VPA never evicts to scale down; the others (evaluation, development,
// testing, or none) are scaled down in the maintenance window only.
const (
	PurposeProduction     Purpose = "production"
	PurposeInfrastructure Purpose = "infrastructure"
)

// Wire names of Gardener's VPA eviction requirements: the label hands the VPA to Gardener's
// eviction-requirements controller, the annotation says when it may evict to scale down.
const (
	labelVPAEvictionRequirements           = "autoscaling.gardener.cloud/eviction-requirements"
	evictionRequirementManagedByController = "managed-by-controller"
	annotationVPADownscaleRestriction      = "eviction-requirements.autoscaling.gardener.cloud/downscale-restriction"
	annotationShootMaintenanceWindow       = "shoot.gardener.cloud/maintenance-window"
	downscaleNever                         = "never"
	downscaleInMaintenanceWindowOnly       = "in-maintenance-window-only"
)

// downscaleRestriction is what gardenlet derives from the shoot: an important etcd of a production or
// infrastructure shoot, or any etcd of a shoot whose scale-down is disabled, is never scaled down by an
// eviction; every other one only within the maintenance window.
func (v Values) downscaleRestriction() string {
	if v.Class == ClassImportant && (v.Purpose == PurposeProduction || v.Purpose == PurposeInfrastructure) {
		return downscaleNever
	}
	if v.ScaleDownDisabled {
		return downscaleNever
	}
	return downscaleInMaintenanceWindowOnly
}
