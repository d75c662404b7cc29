package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

const dockerfile = "../../Dockerfile"

// stub builds testdata/stub, which prints version, as the controller is
// built: static and trimmed.
func stub(t *testing.T, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "stub")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", out, "./testdata/stub")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the stub: %v\n%s", err, b)
	}
	return out
}

func buildImage(t *testing.T, binary, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := build(binary, version, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rewrite writes a copy of the image tagged tag in dir, changed by change,
// to a new layout under the same tag.
func rewrite(t *testing.T, dir, tag string, change func(v1.Image) (v1.Image, error)) string {
	t.Helper()
	img, err := taggedImage(dir, tag)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = change(img); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "image")
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{specv1.AnnotationRefName: tag})); err != nil {
		t.Fatal(err)
	}
	return out
}

func withConfig(change func(*v1.Config)) func(v1.Image) (v1.Image, error) {
	return func(img v1.Image) (v1.Image, error) {
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cfg = cfg.DeepCopy()
		change(&cfg.Config)
		return mutate.ConfigFile(img, cfg)
	}
}

func TestBuildThenCheck(t *testing.T) {
	dir := buildImage(t, stub(t, "v1.2.3"), "v1.2.3")
	if err := check(dir, dockerfile, "v1.2.3"); err != nil {
		t.Fatalf("check of a freshly built image: %v", err)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	bin := stub(t, "v1.2.3")
	a, err := build(bin, "v1.2.3", filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := build(bin, "v1.2.3", filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two builds of one binary: digests %s and %s", a, b)
	}
}

func TestCheckRejects(t *testing.T) {
	const version = "v1.2.3"
	good := buildImage(t, stub(t, version), version)
	passwd, err := fileLayer("etc/passwd", []byte("nonroot:x:65532:65532::/:/sbin/nologin\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		dir        string
		version    string
		dockerfile string
		want       string
	}{
		{
			name:    "another tag",
			dir:     good,
			version: "v9",
			want:    `tagged "v1.2.3", want "v9"`,
		},
		{
			name:    "binary of another version",
			dir:     buildImage(t, stub(t, "v0.0.1"), version),
			version: version,
			want:    `printed "v0.0.1"`,
		},
		{
			name:    "root user",
			dir:     rewrite(t, good, version, withConfig(func(c *v1.Config) { c.User = "0:0" })),
			version: version,
			want:    `user "0:0"`,
		},
		{
			name:    "other entrypoint",
			dir:     rewrite(t, good, version, withConfig(func(c *v1.Config) { c.Entrypoint = []string{"/bin/controller"} })),
			version: version,
			want:    "entrypoint",
		},
		{
			name:    "a command",
			dir:     rewrite(t, good, version, withConfig(func(c *v1.Config) { c.Cmd = []string{"--help"} })),
			version: version,
			want:    "cmd",
		},
		{
			name:    "another file",
			dir:     rewrite(t, good, version, func(img v1.Image) (v1.Image, error) { return mutate.AppendLayers(img, passwd) }),
			version: version,
			want:    "etc/passwd",
		},
		{
			name:       "Dockerfile runs as root",
			dir:        good,
			version:    version,
			dockerfile: "FROM scratch\nCOPY --from=build /out/c /deployobject-controller\nUSER 0:0\nENTRYPOINT [\"/deployobject-controller\"]\n",
			want:       "nonroot user 65532",
		},
		{
			name:       "Dockerfile with another user",
			dir:        good,
			version:    version,
			dockerfile: "FROM scratch\nCOPY --from=build /out/c /deployobject-controller\nUSER 65532:0\nENTRYPOINT [\"/deployobject-controller\"]\n",
			want:       `want "65532:0"`,
		},
		{
			name:       "Dockerfile with another path",
			dir:        good,
			version:    version,
			dockerfile: "FROM scratch\nCOPY --from=build /out/c /usr/bin/c\nUSER 65532:65532\nENTRYPOINT [\"/usr/bin/c\"]\n",
			want:       `want ["/usr/bin/c"]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			df := dockerfile
			if tc.dockerfile != "" {
				df = filepath.Join(t.TempDir(), "Dockerfile")
				if err := os.WriteFile(df, []byte(tc.dockerfile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := check(tc.dir, df, tc.version)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestBuildRejectsWhatAnEmptyBaseCannotRun(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho v1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := build(script, "v1", filepath.Join(t.TempDir(), "image")); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
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
