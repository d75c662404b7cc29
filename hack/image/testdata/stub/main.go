// Command stub stands in for the controller in the image tests: it prints
// its version, set with -ldflags "-X main.version=...". It links one module
// besides the standard library, for the SBOM to list.
package main

import (
	"fmt"
	"os"

	_ "github.com/opencontainers/go-digest"
)

var version = "unset"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(version)
		return
	}
	os.Exit(2)
}
