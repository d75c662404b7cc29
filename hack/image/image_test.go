package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

const (
	dockerfile = "../../Dockerfile"
	// stubModule is the module testdata/stub links.
	stubModule = "github.com/opencontainers/go-digest"
	// stubModuleSum is its hash in go.sum.
	stubModuleSum = "h1:apOUWs51W5PlhuyGyz9FCeeBIOUDA/6nW8Oi/yOhh5U="
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

func testMeta() metadata {
	return metadata{
		version:  "v1.2.3",
		revision: "0123456789abcdef0123456789abcdef01234567",
		source:   "https://source.example/deployobject-controller",
		created:  time.Unix(1700000000, 0).UTC(),
	}
}

var stubs sync.Map

// stub builds testdata/stub for arch, printing version, as the Makefile
// builds the controller: static and trimmed; or with flags instead of
// -trimpath.
func stub(t *testing.T, version, arch string, flags ...string) string {
	t.Helper()
	if flags == nil {
		flags = []string{"-trimpath"}
	}
	key := version + "/" + arch + "/" + strings.Join(flags, " ")
	if path, ok := stubs.Load(key); ok {
		return path.(string)
	}
	dir, err := os.MkdirTemp("", "image-stub-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "stub")
	// The stub is built inside this repository's checkout, so go build
	// would stamp it with the checkout's commit where GOFLAGS does not say
	// -buildvcs=false, and check would compare that commit with
	// testMeta's.
	args := append([]string{"build", "-buildvcs=false"}, flags...)
	cmd := exec.Command("go", append(args, "-ldflags", "-s -w -X main.version="+version, "-o", out, "./testdata/stub")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the stub: %v\n%s", err, b)
	}
	stubs.Store(key, out)
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	stubs.Range(func(_, path any) bool {
		os.RemoveAll(filepath.Dir(path.(string)))
		return true
	})
	os.Exit(code)
}

// testLayout is a layout and its SBOM directory.
type testLayout struct{ dir, sbomDir string }

func buildImage(t *testing.T, meta metadata, binaries ...string) testLayout {
	t.Helper()
	l := testLayout{dir: filepath.Join(t.TempDir(), "image"), sbomDir: t.TempDir()}
	if _, err := build(binaries, meta, l.dir, l.sbomDir); err != nil {
		t.Fatal(err)
	}
	return l
}

// buildBoth builds the image for both platforms of the stub printing version.
func buildBoth(t *testing.T, meta metadata, version string) testLayout {
	t.Helper()
	return buildImage(t, meta, stub(t, version, "amd64"), stub(t, version, "arm64"))
}

// rewrite builds the image of both stubs with change applied to each
// platform's image before its SBOM is attached.
func rewrite(t *testing.T, meta metadata, change func(platformImage) (platformImage, error)) testLayout {
	t.Helper()
	var images []platformImage
	for _, arch := range []string{"amd64", "arm64"} {
		pi, err := buildPlatform(stub(t, meta.version, arch), meta)
		if err != nil {
			t.Fatal(err)
		}
		if pi, err = change(pi); err != nil {
			t.Fatal(err)
		}
		if pi.artifact, err = sbomArtifact(pi.sbom, sbomFileName(pi.platform), pi.image, meta); err != nil {
			t.Fatal(err)
		}
		images = append(images, pi)
	}
	l := testLayout{dir: filepath.Join(t.TempDir(), "image"), sbomDir: t.TempDir()}
	if _, err := writeLayout(images, meta, l.dir, l.sbomDir); err != nil {
		t.Fatal(err)
	}
	return l
}

func withImage(change func(v1.Image) (v1.Image, error)) func(platformImage) (platformImage, error) {
	return func(pi platformImage) (platformImage, error) {
		img, err := change(pi.image)
		pi.image = img
		return pi, err
	}
}

func withConfig(change func(*v1.Config)) func(platformImage) (platformImage, error) {
	return withImage(func(img v1.Image) (v1.Image, error) {
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cfg = cfg.DeepCopy()
		change(&cfg.Config)
		return mutate.ConfigFile(img, cfg)
	})
}

func options(l testLayout, meta metadata) checkOptions {
	return checkOptions{
		dir:        l.dir,
		dockerfile: dockerfile,
		gomod:      "go.mod",
		sbomDir:    l.sbomDir,
		platforms:  []v1.Platform{amd64, arm64},
		require:    []string{stubModule},
		meta:       meta,
	}
}

func TestBuildThenCheck(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("the stub cannot run on %s", runtime.GOARCH)
	}
	meta := testMeta()
	l := buildBoth(t, meta, meta.version)
	if err := check(options(l, meta)); err != nil {
		t.Fatalf("check of a freshly built image: %v", err)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	meta := testMeta()
	a, b := stub(t, meta.version, "amd64"), stub(t, meta.version, "arm64")
	one, err := build([]string{a, b}, meta, filepath.Join(t.TempDir(), "one"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The order of the binaries does not matter.
	two, err := build([]string{b, a}, meta, filepath.Join(t.TempDir(), "two"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if one != two {
		t.Errorf("two builds of the same binaries: digests %s and %s", one, two)
	}
	meta.created = meta.created.Add(time.Second)
	three, err := build([]string{a, b}, meta, filepath.Join(t.TempDir(), "three"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if three == one {
		t.Errorf("builds of another commit time have the same digest %s", one)
	}
}

func TestCheckRejects(t *testing.T) {
	meta := testMeta()
	good := buildBoth(t, meta, meta.version)
	passwd, err := fileLayer("etc/passwd", []byte("nonroot:x:65532:65532::/:/sbin/nologin\n"), meta.created)
	if err != nil {
		t.Fatal(err)
	}
	otherVersion := meta
	otherVersion.version = "v9"
	otherRevision := meta
	otherRevision.revision = "fedcba9876543210fedcba9876543210fedcba98"
	otherTime := meta
	otherTime.created = meta.created.Add(time.Hour)
	noSource := meta
	noSource.source = ""

	withoutSBOM := buildBoth(t, meta, meta.version)
	p, err := layout.FromPath(withoutSBOM.dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readLayout(withoutSBOM.dir, meta.version)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveDescriptors(match.Digests(b.sboms[b.images[0].Digest][0].Digest)); err != nil {
		t.Fatal(err)
	}

	staleCopy := buildBoth(t, meta, meta.version)
	if err := os.WriteFile(filepath.Join(staleCopy.sbomDir, sbomFileName(arm64)), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		l    testLayout
		// change changes the options of the check.
		change func(*checkOptions)
		want   string
	}{
		{
			name:   "another tag",
			l:      good,
			change: func(o *checkOptions) { o.meta = otherVersion },
			want:   `tagged ["v1.2.3"], want "v9"`,
		},
		{
			name:   "another revision",
			l:      good,
			change: func(o *checkOptions) { o.meta = otherRevision },
			want:   "the index's annotations: org.opencontainers.image.revision",
		},
		{
			name:   "another commit time",
			l:      good,
			change: func(o *checkOptions) { o.meta = otherTime },
			want:   "org.opencontainers.image.created",
		},
		{
			name:   "a source where none is known",
			l:      good,
			change: func(o *checkOptions) { o.meta = noSource },
			want:   "unexpected org.opencontainers.image.source",
		},
		{
			name: "one platform",
			l:    buildImage(t, meta, stub(t, meta.version, "amd64")),
			want: `holds images for ["linux/amd64"], want ["linux/amd64" "linux/arm64"]`,
		},
		{
			name: "binary of another version",
			l:    buildBoth(t, meta, "v0.0.1"),
			want: "the version v1.2.3 is nowhere in the binary",
		},
		{
			name: "a binary built without -trimpath",
			l:    buildImage(t, meta, stub(t, meta.version, "amd64"), stub(t, meta.version, "arm64", "-trimpath=false")),
			want: `linux/arm64: /deployobject-controller: built with -trimpath="", want "true"`,
		},
		{
			name: "binaries built with other flags",
			l:    buildImage(t, meta, stub(t, meta.version, "amd64"), stub(t, meta.version, "arm64", "-trimpath", "-tags", "other")),
			want: "linux/arm64: /deployobject-controller is built unlike the one for linux/amd64",
		},
		{
			name: "a binary for another platform",
			l: rewrite(t, meta, func(pi platformImage) (platformImage, error) {
				if pi.platform.Equals(arm64) {
					data, err := os.ReadFile(stub(t, meta.version, "amd64"))
					if err != nil {
						return pi, err
					}
					pi.image, err = image(data, arm64, meta)
					return pi, err
				}
				return pi, nil
			}),
			want: "linux/arm64: /deployobject-controller is an executable for amd64",
		},
		{
			name: "an image of another platform",
			l: rewrite(t, meta, func(pi platformImage) (platformImage, error) {
				if pi.platform.Equals(arm64) {
					pi.platform.Architecture = "s390x"
				}
				return pi, nil
			}),
			want: `holds images for ["linux/amd64" "linux/s390x"]`,
		},
		{
			name: "a base image name",
			l: rewrite(t, meta, withImage(func(img v1.Image) (v1.Image, error) {
				return mutate.Annotations(img, map[string]string{specv1.AnnotationBaseImageName: "scratch"}).(v1.Image), nil
			})),
			want: "the manifest's annotations: unexpected org.opencontainers.image.base.name",
		},
		{
			name: "no labels",
			l:    rewrite(t, meta, withConfig(func(c *v1.Config) { c.Labels = nil })),
			want: "the configuration's labels: org.opencontainers.image.licenses",
		},
		{
			name: "root user",
			l:    rewrite(t, meta, withConfig(func(c *v1.Config) { c.User = "0:0" })),
			want: `user "0:0"`,
		},
		{
			name: "other entrypoint",
			l:    rewrite(t, meta, withConfig(func(c *v1.Config) { c.Entrypoint = []string{"/bin/controller"} })),
			want: "entrypoint",
		},
		{
			name: "a command",
			l:    rewrite(t, meta, withConfig(func(c *v1.Config) { c.Cmd = []string{"--help"} })),
			want: "cmd",
		},
		{
			name: "another file",
			l:    rewrite(t, meta, withImage(func(img v1.Image) (v1.Image, error) { return mutate.AppendLayers(img, passwd) })),
			want: "etc/passwd",
		},
		{
			name: "no SBOM",
			l:    withoutSBOM,
			want: "0 SBOMs refer to the image",
		},
		{
			name: "an SBOM of another binary",
			l: rewrite(t, meta, func(pi platformImage) (platformImage, error) {
				other, err := os.ReadFile(stub(t, "v0.0.1", pi.platform.Architecture))
				if err != nil {
					return pi, err
				}
				pi.sbom, err = spdxSBOM(other, pi.platform, meta)
				return pi, err
			}),
			want: "the SBOM is not the one of the image's binary",
		},
		{
			name: "a stale copy of the SBOM",
			l:    staleCopy,
			want: "sbom-linux-arm64.spdx.json is not the SBOM in the image",
		},
		{
			name: "another main module",
			l:    good,
			change: func(o *checkOptions) {
				o.gomod = goMod(t, "module deployobject.dev/controller\nrequire "+stubModule+" v1.0.0\n", stubModule+" v1.0.0 "+stubModuleSum+"\n")
			},
			want: "the SBOM describes",
		},
		{
			name: "another version of a module",
			l:    good,
			change: func(o *checkOptions) {
				o.gomod = goMod(t, "module deployobject.dev/controller/hack/image\nrequire "+stubModule+" v1.0.1\n",
					stubModule+" v1.0.1 h1:3m0tEU1fEDWGDLarNaZsJbaY0t9OJTjCm1kWdpAwyLQ=\n")
			},
			want: "the SBOM names " + stubModule + ` at "v1.0.0"`,
		},
		{
			name:   "a module the binary does not link",
			l:      good,
			change: func(o *checkOptions) { o.require = []string{"golang.org/x/mod"} },
			want:   "the SBOM does not name golang.org/x/mod",
		},
		{
			name:   "Dockerfile runs as root",
			l:      good,
			change: withDockerfile(t, "FROM scratch\nCOPY --from=build /out/c /deployobject-controller\nUSER 0:0\nENTRYPOINT [\"/deployobject-controller\"]\n"),
			want:   "nonroot user 65532",
		},
		{
			name:   "Dockerfile with another user",
			l:      good,
			change: withDockerfile(t, "FROM scratch\nCOPY --from=build /out/c /deployobject-controller\nUSER 65532:0\nENTRYPOINT [\"/deployobject-controller\"]\n"),
			want:   `want "65532:0"`,
		},
		{
			name:   "Dockerfile with another path",
			l:      good,
			change: withDockerfile(t, "FROM scratch\nCOPY --from=build /out/c /usr/bin/c\nUSER 65532:65532\nENTRYPOINT [\"/usr/bin/c\"]\n"),
			want:   `want ["/usr/bin/c"]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(tc.l, meta)
			if tc.change != nil {
				tc.change(&o)
			}
			err := check(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// goMod writes a go.mod and a go.sum and returns the go.mod's path.
func goMod(t *testing.T, mod, sum string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(path, []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func withDockerfile(t *testing.T, content string) func(*checkOptions) {
	path := filepath.Join(t.TempDir(), "Dockerfile")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(o *checkOptions) { o.dockerfile = path }
}

func TestBuildRejects(t *testing.T) {
	meta := testMeta()
	out := filepath.Join(t.TempDir(), "image")
	amd := stub(t, meta.version, "amd64")
	if _, err := build([]string{amd, amd}, meta, out, t.TempDir()); err == nil || !strings.Contains(err.Error(), "are both for linux/amd64") {
		t.Errorf("build of one platform twice: %v, want are both for linux/amd64", err)
	}
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho v1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := build([]string{script}, meta, out, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
		t.Errorf("build of a script: %v, want not a Linux executable", err)
	}
	// The system's own tools are linked against its C library.
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI's machine has no readable /bin/sh: %v", err)
		}
		t.Skip("no /bin/sh")
	}
	if _, err := staticLinuxArch(sh); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("/bin/sh: %v, want dynamically linked", err)
	}
}

func TestSelect(t *testing.T) {
	meta := testMeta()
	l := buildBoth(t, meta, meta.version)
	out := filepath.Join(t.TempDir(), "selected")
	if err := selectPlatform(l.dir, meta.version, out, arm64); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations[specv1.AnnotationRefName] != meta.version {
		t.Fatalf("selected layout holds %+v, want one image tagged %s", im.Manifests, meta.version)
	}
	img, err := p.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != "arm64" {
		t.Errorf("selected the image for %s, want arm64", cfg.Architecture)
	}
	s390x := v1.Platform{OS: "linux", Architecture: "s390x"}
	if err := selectPlatform(l.dir, meta.version, filepath.Join(t.TempDir(), "none"), s390x); err == nil || !strings.Contains(err.Error(), "no image for linux/s390x") {
		t.Errorf("select of a missing platform: %v, want no image for linux/s390x", err)
	}
}

func TestSourceURL(t *testing.T) {
	for _, tc := range []struct {
		remote, want string
		note         bool
	}{
		{remote: ""},
		{remote: "https://source.example/org/repo.git", want: "https://source.example/org/repo.git"},
		{remote: "https://user:token@source.example/org/repo", want: "https://source.example/org/repo"},
		{remote: "git@source.example:org/repo.git", note: true},
		{remote: "ssh://git@source.example/org/repo.git", note: true},
		{remote: "/srv/git/repo.git", note: true},
	} {
		got, note := sourceURL(tc.remote)
		if got != tc.want || (note != "") != tc.note {
			t.Errorf("sourceURL(%q) = %q, note %q; want %q, a note: %v", tc.remote, got, note, tc.want, tc.note)
		}
	}
}
