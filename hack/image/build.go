package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// epoch is the time stamp of every file, layer and the image itself, so
// that the same binary always makes the same image digest.
var epoch = time.Unix(0, 0).UTC()

func buildCommand(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	binary := fs.String("binary", "", "The controller binary: a static Linux executable.")
	version := fs.String("version", "", "The controller's version: the image's tag (its ref.name in the layout) and its version label.")
	out := fs.String("out", "", "Directory of the OCI image layout to write; replaced if it exists.")
	_ = fs.Parse(args)
	if *binary == "" || *version == "" || *out == "" {
		return errors.New("build needs -binary, -version and -out")
	}
	digest, err := build(*binary, *version, *out)
	if err != nil {
		return err
	}
	fmt.Printf("image: wrote %s:%s (%s)\n", *out, *version, digest)
	return nil
}

// build writes an OCI image layout at out holding one image: the binary at
// entrypoint on an empty base. It returns the manifest's digest.
func build(binary, version, out string) (v1.Hash, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return v1.Hash{}, err
	}
	arch, err := staticLinuxArch(data)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %w", binary, err)
	}
	img, err := image(data, arch, version)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := os.RemoveAll(out); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("writing the layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{specv1.AnnotationRefName: version})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the image: %w", err)
	}
	return img.Digest()
}

// image is the image of binary, which runs on arch.
func image(binary []byte, arch, version string) (v1.Image, error) {
	layer, err := fileLayer(strings.TrimPrefix(entrypoint, "/"), binary)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "COPY deployobject-controller " + entrypoint},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: epoch}
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.User = user
	cfg.Config.Labels = map[string]string{
		specv1.AnnotationTitle:   "deployobject-controller",
		specv1.AnnotationVersion: version,
	}
	return mutate.ConfigFile(img, cfg)
}

// fileLayer is a gzip-compressed layer holding one executable file owned by
// root, so that the user the controller runs as cannot change it.
func fileLayer(name string, content []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(content)), ModTime: epoch, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerTar := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// goArch maps ELF machines to Go's (and OCI's) architecture names.
var goArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
	elf.EM_S390:    "s390x",
	elf.EM_RISCV:   "riscv64",
}

// staticLinuxArch is the architecture of a statically linked Linux
// executable, and an error for anything else: an empty base image has no
// dynamic loader and no libraries.
func staticLinuxArch(data []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not a Linux executable (build it with GOOS=linux): %w", err)
	}
	defer f.Close()
	// Go writes ELFOSABI_NONE for Linux; other systems have ABIs of their own.
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return "", fmt.Errorf("not a Linux executable: OS ABI %s", f.OSABI)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("dynamically linked (build it with CGO_ENABLED=0)")
		}
	}
	arch, ok := goArch[f.Machine]
	if !ok {
		return "", fmt.Errorf("unknown machine %s", f.Machine)
	}
	return arch, nil
}
