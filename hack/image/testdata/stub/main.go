// Command stub stands in for the controller in the image tests: it prints
// its version, set with -ldflags "-X main.version=...".
package main

import (
	"fmt"
	"os"
)

var version = "unset"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(version)
		return
	}
	os.Exit(2)
}
