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
	"path/filepath"
	"slices"
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

func buildCommand(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	var binaries []string
	fs.Func("binary", "A controller binary: a static Linux executable; once per platform, which is read from the executable.", func(s string) error {
		binaries = append(binaries, s)
		return nil
	})
	meta := metadataFlags(fs)
	out := fs.String("out", "", "Directory of the OCI image layout to write; replaced if it exists.")
	sbomDir := fs.String("sbom-dir", "", "Directory to write a copy of each platform's SBOM to, as sbom-OS-ARCH.spdx.json.")
	_ = fs.Parse(args)
	if len(binaries) == 0 || *out == "" || *sbomDir == "" {
		return errors.New("build needs -binary (once per platform), -out and -sbom-dir")
	}
	m, err := meta()
	if err != nil {
		return err
	}
	digest, err := build(binaries, m, *out, *sbomDir)
	if err != nil {
		return err
	}
	fmt.Printf("image: wrote %s:%s (%s)\n", *out, m.version, digest)
	return nil
}

// platformImage is one platform's image and the SBOM that refers to it.
type platformImage struct {
	platform v1.Platform
	image    v1.Image
	sbom     []byte
	artifact v1.Image
}

// build writes an OCI image layout at out: an image index tagged with the
// version, holding one image per binary, and beside it each image's SBOM as
// an artifact whose subject is that image. It writes a copy of each SBOM to
// sbomDir and returns the index's digest.
func build(binaries []string, meta metadata, out, sbomDir string) (v1.Hash, error) {
	var images []platformImage
	for _, binary := range binaries {
		pi, err := buildPlatform(binary, meta)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("%s: %w", binary, err)
		}
		if i := slices.IndexFunc(images, func(o platformImage) bool { return o.platform.Equals(pi.platform) }); i >= 0 {
			return v1.Hash{}, fmt.Errorf("%s and %s are both for %s", binaries[i], binary, pi.platform.String())
		}
		images = append(images, pi)
	}
	return writeLayout(images, meta, out, sbomDir)
}

// writeLayout writes the images, their index and their SBOMs.
func writeLayout(images []platformImage, meta metadata, out, sbomDir string) (v1.Hash, error) {
	// The order of the flags must not change the digest.
	slices.SortFunc(images, func(a, b platformImage) int { return strings.Compare(a.platform.String(), b.platform.String()) })

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pi := range images {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        pi.image,
			Descriptor: v1.Descriptor{Platform: &pi.platform},
		})
	}
	idx = mutate.Annotations(idx, meta.annotations()).(v1.ImageIndex)

	if err := os.RemoveAll(out); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("writing the layout: %w", err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{specv1.AnnotationRefName: meta.version})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the image index: %w", err)
	}
	// Untagged, as a registry holds referrers: found by their subject.
	for _, pi := range images {
		if err := p.AppendImage(pi.artifact); err != nil {
			return v1.Hash{}, fmt.Errorf("writing the SBOM of %s: %w", pi.platform.String(), err)
		}
		if err := os.WriteFile(filepath.Join(sbomDir, sbomFileName(pi.platform)), pi.sbom, 0o644); err != nil {
			return v1.Hash{}, err
		}
	}
	return idx.Digest()
}

// sbomFileName is the name of a platform's SBOM, as a file beside the
// layout and as the title of the SBOM's layer.
func sbomFileName(p v1.Platform) string {
	return fmt.Sprintf("sbom-%s-%s.spdx.json", p.OS, p.Architecture)
}

func buildPlatform(binary string, meta metadata) (platformImage, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return platformImage{}, err
	}
	arch, err := staticLinuxArch(data)
	if err != nil {
		return platformImage{}, err
	}
	platform := v1.Platform{OS: "linux", Architecture: arch}
	img, err := image(data, platform, meta)
	if err != nil {
		return platformImage{}, err
	}
	sbom, err := spdxSBOM(data, platform, meta)
	if err != nil {
		return platformImage{}, err
	}
	artifact, err := sbomArtifact(sbom, sbomFileName(platform), img, meta)
	if err != nil {
		return platformImage{}, err
	}
	return platformImage{platform: platform, image: img, sbom: sbom, artifact: artifact}, nil
}

// image is the image of binary, which runs on platform.
func image(binary []byte, platform v1.Platform, meta metadata) (v1.Image, error) {
	layer, err := fileLayer(strings.TrimPrefix(entrypoint, "/"), binary, meta.created)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: meta.created}, CreatedBy: "COPY deployobject-controller " + entrypoint},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: meta.created}
	cfg.OS, cfg.Architecture = platform.OS, platform.Architecture
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.User = user
	// Labels as well as annotations: `docker inspect` and most scanners
	// read the configuration's labels, registries and referrers the
	// manifest's annotations.
	cfg.Config.Labels = meta.annotations()
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, meta.annotations()).(v1.Image), nil
}

// fileLayer is a gzip-compressed layer holding one executable file owned by
// root, so that the user the controller runs as cannot change it.
func fileLayer(name string, content []byte, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(content)), ModTime: mtime, Format: tar.FormatPAX}
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
