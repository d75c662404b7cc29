// Command release writes the release artifacts of deployobject-controller
// into dist/: the YAML installers (`make build-installer`) and the Helm chart
// as a package (`make build-chart`).
//
//	release installer -root ../.. -out ../../dist -image IMG -version VERSION
//	release chart -root ../.. -out ../../dist -image IMG -version VERSION
//
// The installers are kustomize builds of deploy/, made with the kustomize
// library (the one kubectl embeds), so that no cluster, kubectl or
// kustomize binary is needed. The module also holds the chart's tests and
// pins the helm CLI (`go tool helm`) that e2e installs the chart with. It is
// a module of its own so that Helm's and kustomize's dependencies, which
// need newer k8s.io libraries, stay out of the controller's go.mod.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: release installer|chart -root DIR -out DIR -image IMG -version VERSION")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	root := fs.String("root", "../..", "the repository's root")
	out := fs.String("out", "../../dist", "where to write")
	image := fs.String("image", "", "the controller's image, REPOSITORY:TAG, REPOSITORY@DIGEST or both")
	version := fs.String("version", "", "the version released (git describe)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *image == "" || *version == "" {
		return fmt.Errorf("%s: -image and -version are required", args[0])
	}
	if _, err := parseImage(*image); err != nil {
		return err
	}
	switch args[0] {
	case "installer":
		return writeInstaller(*root, *out, *image, *version)
	case "chart":
		path, err := packageChart(*root, *out, *image, *version)
		if err != nil {
			return err
		}
		fmt.Println(path)
		return nil
	}
	return fmt.Errorf("unknown command %q: installer or chart", args[0])
}
