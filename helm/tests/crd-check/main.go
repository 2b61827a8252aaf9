// crd-check decodes every prometheus-operator object in the rendered
// manifests given as arguments (or on stdin) into the operator's own Go
// types, strictly: an unknown field, a field of the wrong type or an
// unknown monitoring.coreos.com kind fails, as the CRD's schema would
// refuse it on a cluster. Other objects are left to kubernetes-validate.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const group = "monitoring.coreos.com/v1"

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func main() {
	inputs := os.Args[1:]
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	checked := 0
	for _, name := range inputs {
		n, err := checkFile(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crd-check: %s: %v\n", name, err)
			os.Exit(1)
		}
		checked += n
	}
	fmt.Printf("crd-check: %d prometheus-operator object(s) valid\n", checked)
}

func checkFile(name string) (int, error) {
	var in io.Reader = os.Stdin
	if name != "-" {
		file, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		defer file.Close()
		in = file
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	checked := 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return checked, nil
		}
		if err != nil {
			return checked, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta typeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return checked, err
		}
		if meta.APIVersion != group {
			continue
		}
		var object any
		switch meta.Kind {
		case "ServiceMonitor":
			object = &monitoringv1.ServiceMonitor{}
		case "PodMonitor":
			object = &monitoringv1.PodMonitor{}
		case "PrometheusRule":
			object = &monitoringv1.PrometheusRule{}
		default:
			return checked, fmt.Errorf("unknown kind %s in %s", meta.Kind, group)
		}
		if err := yaml.UnmarshalStrict(doc, object); err != nil {
			return checked, fmt.Errorf("%s: %w", meta.Kind, err)
		}
		checked++
	}
}
