package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func pushCommand(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	dir := fs.String("layout", "", "Directory of the OCI image layout that build wrote.")
	tag := fs.String("tag", "", "The tag of the image index in the layout: the version it was built with.")
	to := fs.String("to", "", "Where to push: REGISTRY/REPOSITORY:TAG, all three given.")
	_ = fs.Parse(args)
	if *dir == "" || *tag == "" {
		return errors.New("push needs -layout and -tag")
	}
	if *to == "" {
		return errors.New("push needs -to REGISTRY/REPOSITORY:TAG (make image-push IMG=REGISTRY/deployobject-controller:TAG)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pushed, err := push(*dir, *tag, *to, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return err
	}
	fmt.Println("image: pushed", pushed)
	return nil
}

// push pushes the index tagged tag in the layout at dir to the tag to, with
// its images and their SBOM artifacts. Where the registry does not serve the
// referrers API, go-containerregistry lists each SBOM in the index tagged
// with its subject's digest (sha256-...), as the distribution spec's
// fallback asks. It returns the index's reference by digest.
func push(dir, tag, to string, opts ...remote.Option) (string, error) {
	// Strict: no default registry (Docker Hub) and no default tag (latest).
	ref, err := name.NewTag(to, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("%q names no REGISTRY/REPOSITORY:TAG: %w", to, err)
	}
	b, err := readLayout(dir, tag)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if err := remote.WriteIndex(ref, b.index, opts...); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	// After the images they describe, so that a push cut short leaves no
	// SBOM of a missing image.
	for _, d := range b.images {
		for _, s := range b.sboms[d.Digest] {
			img, err := b.path.Image(s.Digest)
			if err != nil {
				return "", err
			}
			if err := remote.Write(ref.Context().Digest(s.Digest.String()), img, opts...); err != nil {
				return "", fmt.Errorf("pushing the SBOM of %s: %w", d.Platform, err)
			}
		}
	}
	digest, err := b.index.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(digest.String()).String(), nil
}
