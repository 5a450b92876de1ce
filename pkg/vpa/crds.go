// Package vpa ships the CustomResourceDefinitions of the VerticalPodAutoscaler API (autoscaling.k8s.io/v1)
// for the clusters that have no VPA installed by someone else: the envtest harness and the local seed. The
// manifest is the one the k8s.io/autoscaler/vertical-pod-autoscaler module ships (deploy/vpa-v1-crd-gen.yaml),
// copied by `make generate` from the version go.mod pins, so that the CRD and the Go types we write with
// always come from the same release (`make verify` fails when they drift apart).
package vpa

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:embed crds/vpa-v1-crd-gen.yaml
var manifest []byte

// CRDs returns the VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint CRDs.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the VPA CRD manifest: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("decoding a VPA CRD: %w", err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
