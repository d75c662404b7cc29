// The image builder and its check (see main.go); a module of its own so that
// go-containerregistry stays out of the controller's and hack/tools' go.mod.
module deployobject.dev/controller/hack/image

go 1.26.0

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/opencontainers/image-spec v1.1.1
	golang.org/x/mod v0.41.0
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
)
