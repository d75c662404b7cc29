package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

const (
	title       = "deployobject-controller"
	description = "Kubernetes controller that keeps a Deployment, and the Service, routes, autoscaler and other objects asked for, in line with each DeployObject (app.deployobject.dev/v1)"
	// license is the SPDX identifier of LICENSE.
	license = "Apache-2.0"
)

// metadata is what the image says about itself, the same in its index, its
// manifests, their configurations and its SBOMs.
type metadata struct {
	version  string
	revision string
	// source is a URL of the source repository, or empty when unknown.
	source string
	// created is the commit's time: the time stamp of every file, layer and
	// document in the image, so that one commit makes one digest.
	created time.Time
}

// metadataFlags defines the flags of the metadata on fs; the function it
// returns reads them once fs is parsed.
func metadataFlags(fs *flag.FlagSet) func() (metadata, error) {
	version := fs.String("version", "", "The controller's version: the image's tag (its ref.name in the layout) and its version annotation.")
	revision := fs.String("revision", "", "The commit built; empty outside a git checkout.")
	created := fs.String("created", "", "The commit's time in seconds since the epoch, as SOURCE_DATE_EPOCH.")
	source := fs.String("source", "", "Where the source is, as `git remote get-url origin` prints it; empty when unknown. Only an http(s) URL is used, without its user information.")
	return func() (metadata, error) {
		if *version == "" || *created == "" {
			return metadata{}, errors.New("-version and -created are needed")
		}
		secs, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return metadata{}, fmt.Errorf("-created %q is not seconds since the epoch: %w", *created, err)
		}
		src, note := sourceURL(*source)
		if note != "" {
			fmt.Fprintln(os.Stderr, "image:", note)
		}
		return metadata{version: *version, revision: *revision, source: src, created: time.Unix(secs, 0).UTC()}, nil
	}
}

// sourceURL is the source annotation for a git remote, or empty with a note
// saying why. A remote such as git@host:path or a directory is no URL a
// reader can open, and turning one into a URL would be a guess. User
// information is dropped, since an https remote may carry a token.
func sourceURL(remote string) (string, string) {
	if remote == "" {
		return "", ""
	}
	u, err := url.Parse(remote)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Sprintf("the source %q is not an http(s) URL; %s is left out (set SOURCE=https://... to give one)", remote, specv1.AnnotationSource)
	}
	u.User = nil
	return u.String(), ""
}

// annotations are the OCI annotations of the index and of each manifest,
// and the labels of each configuration. The base is empty (scratch), so
// there is no org.opencontainers.image.base.name.
func (m metadata) annotations() map[string]string {
	a := map[string]string{
		specv1.AnnotationTitle:       title,
		specv1.AnnotationDescription: description,
		specv1.AnnotationVersion:     m.version,
		specv1.AnnotationLicenses:    license,
		specv1.AnnotationCreated:     m.created.Format(time.RFC3339),
	}
	if m.revision != "" {
		a[specv1.AnnotationRevision] = m.revision
	}
	if m.source != "" {
		a[specv1.AnnotationSource] = m.source
	}
	return a
}
