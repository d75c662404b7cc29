// Command image builds the controller's container image without a container
// engine, as an OCI image layout, and checks a built one. `make image` and
// `make test-image` run it:
//
//	image build -binary bin/deployobject-controller -version v0.1.0 -out bin/image
//	image check -layout bin/image -dockerfile Dockerfile -version v0.1.0
//
// The image is the one the Dockerfile builds: the static binary alone on an
// empty base, run as the numeric user 65532. Numeric, because nothing in the
// image resolves names, so it needs no /etc/passwd; no CA bundle either,
// because in a cluster the controller trusts the CA of its ServiceAccount.
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
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: image build -binary FILE -version V -out DIR | image check -layout DIR -dockerfile FILE -version V")
	os.Exit(2)
}
