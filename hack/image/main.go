// Command image builds the controller's container image without a container
// engine, checks it, and pushes it. `make image`, `make test-image` and
// `make image-push` run it:
//
//	image build -binary bin/linux-amd64/deployobject-controller -binary bin/linux-arm64/deployobject-controller \
//		-version v0.1.0 -revision COMMIT -created SECONDS -source URL -out bin/image -sbom-dir bin
//	image check -layout bin/image -dockerfile Dockerfile -gomod go.mod -require k8s.io/client-go \
//		-platform linux/amd64 -platform linux/arm64 -sbom-dir bin -version v0.1.0 -revision COMMIT -created SECONDS -source URL
//	image push -layout bin/image -tag v0.1.0 -to REGISTRY/deployobject-controller:v0.1.0
//	image select -layout bin/image -tag v0.1.0 -out DIR
//
// build writes an OCI image layout: an image index tagged with the version,
// with an image per binary, and an SPDX SBOM per image, attached to it as an
// OCI 1.1 artifact (its subject). Each image is the one the Dockerfile
// builds: the static binary alone on an empty base, run as the numeric user
// 65532. Numeric, because nothing in the image resolves names, so it needs
// no /etc/passwd; no CA bundle either, because in a cluster the controller
// trusts the CA of its ServiceAccount. select writes the image for this
// machine alone, for tools that cannot choose one from an index.
//
// It is a module of its own so that go-containerregistry and its
// dependencies enter neither the controller's go.mod nor hack/tools, whose
// versions build Kubernetes.
package main

import (
	"fmt"
	"os"
)

const (
	// entrypoint is where the binary lives in the image, as in the Dockerfile.
	entrypoint = "/deployobject-controller"
	// user is the conventional "nonroot" user and group of distroless images.
	user = "65532:65532"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = buildCommand(os.Args[2:])
	case "check":
		err = checkCommand(os.Args[2:])
	case "push":
		err = pushCommand(os.Args[2:])
	case "select":
		err = selectCommand(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: image build|check|push|select [flags]; image COMMAND -h lists a command's flags")
	os.Exit(2)
}
