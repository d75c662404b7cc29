package main

import (
	"bytes"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPush pushes a built layout to an in-process registry and reads it
// back, from a registry that serves the referrers API and from one that
// does not, where the SBOMs are found through the referrers tag.
func TestPush(t *testing.T) {
	meta := testMeta()
	l := buildBoth(t, meta, meta.version)
	local, err := readLayout(l.dir, meta.version)
	if err != nil {
		t.Fatal(err)
	}
	localDigest, err := local.index.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// Anonymous, whatever the machine's ~/.docker/config.json holds.
	t.Setenv("DOCKER_CONFIG", t.TempDir())

	for _, referrersAPI := range []bool{true, false} {
		t.Run(map[bool]string{true: "referrers API", false: "referrers tag"}[referrersAPI], func(t *testing.T) {
			srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(referrersAPI)))
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			to := host + "/team/deployobject-controller:v1.2.3"

			if err := pushCommand([]string{"-layout", l.dir, "-tag", meta.version, "-to", to}); err != nil {
				t.Fatal(err)
			}

			ref, err := name.NewTag(to)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := remote.Index(ref)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := idx.Digest(); err != nil || d != localDigest {
				t.Errorf("pushed index %s (%v), want the layout's %s", d, err, localDigest)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(im.Annotations, meta.annotations()) {
				t.Errorf("index annotations %v, want %v", im.Annotations, meta.annotations())
			}
			var platforms []string
			for _, d := range im.Manifests {
				platforms = append(platforms, d.Platform.String())
				img, err := remote.Image(ref.Context().Digest(d.Digest.String()))
				if err != nil {
					t.Fatal(err)
				}
				m, err := img.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(m.Annotations, meta.annotations()) {
					t.Errorf("%s: manifest annotations %v, want %v", d.Platform, m.Annotations, meta.annotations())
				}
				cfg, err := img.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Architecture != d.Platform.Architecture {
					t.Errorf("%s: the configuration is for %s", d.Platform, cfg.Architecture)
				}
				checkPushedSBOM(t, ref, d, local, filepath.Join(l.sbomDir, sbomFileName(*d.Platform)), referrersAPI)
			}
			if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
				t.Errorf("pushed platforms %q, want %q", platforms, want)
			}

			tags, err := remote.List(ref.Context())
			if err != nil {
				t.Fatal(err)
			}
			fallback := slices.ContainsFunc(tags, func(tag string) bool { return strings.HasPrefix(tag, "sha256-") })
			if fallback == referrersAPI {
				t.Errorf("tags %q: referrers tags present %v, want %v", tags, fallback, !referrersAPI)
			}
		})
	}
}

// checkPushedSBOM checks that the registry lists the SBOM among the
// referrers of the image d, and serves it as it is in the layout and in the
// copy beside it.
func checkPushedSBOM(t *testing.T, ref name.Tag, d v1.Descriptor, local *built, copyPath string, referrersAPI bool) {
	t.Helper()
	want := local.sboms[d.Digest][0]
	referrers, err := remote.Referrers(ref.Context().Digest(d.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	rm, err := referrers.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Manifests) != 1 || rm.Manifests[0].Digest != want.Digest {
		t.Fatalf("%s: referrers %+v, want the SBOM %s", d.Platform, rm.Manifests, want.Digest)
	}
	// go-containerregistry's registry lists the configuration's media type
	// as the artifact type; the referrers tag is written by the client.
	if !referrersAPI && rm.Manifests[0].ArtifactType != spdxMediaType {
		t.Errorf("%s: the referrers tag lists the artifact type %q", d.Platform, rm.Manifests[0].ArtifactType)
	}
	art, err := remote.Image(ref.Context().Digest(want.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := art.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != spdxMediaType || m.Subject == nil || m.Subject.Digest != d.Digest {
		t.Errorf("%s: the SBOM's manifest has the artifact type %q and the subject %+v", d.Platform, m.ArtifactType, m.Subject)
	}
	sbom, err := blob(art, m.Layers[0])
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sbom, copied) {
		t.Errorf("%s: the pushed SBOM differs from %s", d.Platform, copyPath)
	}
}

func TestPushRefuses(t *testing.T) {
	meta := testMeta()
	l := buildBoth(t, meta, meta.version)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"-layout", l.dir, "-tag", meta.version}, want: "push needs -to REGISTRY/REPOSITORY:TAG"},
		{args: []string{"-layout", l.dir, "-tag", meta.version, "-to", "deployobject-controller:v1"}, want: "names no REGISTRY/REPOSITORY:TAG"},
		{args: []string{"-layout", l.dir, "-tag", meta.version, "-to", "127.0.0.1:1/deployobject-controller"}, want: "names no REGISTRY/REPOSITORY:TAG"},
		{args: []string{"-layout", l.dir, "-tag", "v9", "-to", "127.0.0.1:1/deployobject-controller:v9"}, want: `tagged ["v1.2.3"], want "v9"`},
	} {
		if err := pushCommand(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("push %q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
