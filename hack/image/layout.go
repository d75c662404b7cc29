package main

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// built is a layout as build writes it: the image index tagged with the
// version, and an SBOM artifact per image in it.
type built struct {
	path  layout.Path
	index v1.ImageIndex
	// images are the descriptors of the index's manifests.
	images []v1.Descriptor
	// sboms are the SBOM artifacts' descriptors by their subject's digest.
	sboms map[v1.Hash][]v1.Descriptor
}

// readLayout reads the layout at dir, whose index tagged tag is the image.
// Anything else in it must be an SBOM artifact whose subject is one of the
// index's images.
func readLayout(dir, tag string) (*built, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	tm, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	b := &built{path: p, sboms: map[v1.Hash][]v1.Descriptor{}}
	var artifacts []v1.Descriptor
	var tags []string
	for _, d := range tm.Manifests {
		if ref, ok := d.Annotations[specv1.AnnotationRefName]; ok {
			tags = append(tags, ref)
			if ref != tag {
				continue
			}
			if d.MediaType != types.OCIImageIndex || b.index != nil {
				return nil, fmt.Errorf("the tag %q names %s %s, want one image index", tag, d.MediaType, d.Digest)
			}
			if b.index, err = top.ImageIndex(d.Digest); err != nil {
				return nil, err
			}
			continue
		}
		if d.ArtifactType != spdxMediaType {
			return nil, fmt.Errorf("the layout holds %s %s (artifact type %q), neither tagged nor an SBOM", d.MediaType, d.Digest, d.ArtifactType)
		}
		artifacts = append(artifacts, d)
	}
	if b.index == nil {
		return nil, fmt.Errorf("the layout is tagged %q, want %q", tags, tag)
	}
	im, err := b.index.IndexManifest()
	if err != nil {
		return nil, err
	}
	b.images = im.Manifests
	for _, d := range artifacts {
		img, err := p.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		m, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		if m.Subject == nil || !slices.ContainsFunc(b.images, func(i v1.Descriptor) bool { return i.Digest == m.Subject.Digest }) {
			return nil, fmt.Errorf("the SBOM %s does not refer to an image of the index", d.Digest)
		}
		b.sboms[m.Subject.Digest] = append(b.sboms[m.Subject.Digest], d)
	}
	return b, nil
}

func selectCommand(args []string) error {
	fs := flag.NewFlagSet("select", flag.ExitOnError)
	dir := fs.String("layout", "", "Directory of the OCI image layout to read.")
	tag := fs.String("tag", "", "The tag of the image index in it.")
	out := fs.String("out", "", "Directory of the layout to write.")
	_ = fs.Parse(args)
	if *dir == "" || *tag == "" || *out == "" {
		return errors.New("select needs -layout, -tag and -out")
	}
	return selectPlatform(*dir, *tag, *out, v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH})
}

// selectPlatform writes a layout at out in which tag names the image for
// platform alone, for tools such as umoci that cannot choose one from an
// index.
func selectPlatform(dir, tag, out string, platform v1.Platform) error {
	b, err := readLayout(dir, tag)
	if err != nil {
		return err
	}
	for _, d := range b.images {
		if d.Platform == nil || !d.Platform.Equals(platform) {
			continue
		}
		img, err := b.index.Image(d.Digest)
		if err != nil {
			return err
		}
		p, err := layout.Write(out, empty.Index)
		if err != nil {
			return err
		}
		return p.AppendImage(img, layout.WithAnnotations(map[string]string{specv1.AnnotationRefName: tag}))
	}
	return fmt.Errorf("%s:%s has no image for %s", dir, tag, platform.String())
}
