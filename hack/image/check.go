package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

func checkCommand(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	var o checkOptions
	fs.StringVar(&o.dir, "layout", "", "Directory of the OCI image layout to check.")
	fs.StringVar(&o.dockerfile, "dockerfile", "", "The Dockerfile whose final stage each image must match.")
	fs.StringVar(&o.gomod, "gomod", "", "The go.mod of the binary's main module; its go.sum is read beside it.")
	fs.StringVar(&o.sbomDir, "sbom-dir", "", "Directory holding the copies of the SBOMs that build wrote.")
	fs.Func("platform", "A platform the index must hold, as OS/ARCH; once per platform.", func(s string) error {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return err
		}
		o.platforms = append(o.platforms, *p)
		return nil
	})
	fs.Func("require", "A module the SBOM must name at the version go.mod requires and with the hash of go.sum; may be repeated.", func(s string) error {
		o.require = append(o.require, s)
		return nil
	})
	meta := metadataFlags(fs)
	_ = fs.Parse(args)
	if o.dir == "" || o.dockerfile == "" || o.gomod == "" || o.sbomDir == "" || len(o.platforms) == 0 {
		return errors.New("check needs -layout, -dockerfile, -gomod, -sbom-dir and -platform")
	}
	var err error
	if o.meta, err = meta(); err != nil {
		return err
	}
	if err := check(o); err != nil {
		return fmt.Errorf("%s:%s: %w", o.dir, o.meta.version, err)
	}
	fmt.Printf("image: %s:%s holds %s; each runs %s as user %s, is annotated and has its SBOM; the one for this machine prints its version\n",
		o.dir, o.meta.version, o.platforms, entrypoint, user)
	return nil
}

type checkOptions struct {
	dir, dockerfile, gomod, sbomDir string
	platforms                       []v1.Platform
	require                         []string
	meta                            metadata
}

// check verifies the image index tagged with the version in the layout at
// dir. It holds an image for each platform and no other, and it and each
// image carry the annotations of meta. Each image is what the final stage
// of the Dockerfile describes (the binary copied to the entrypoint, the
// user), the user is 65532, and the binary is the image's only file, built
// for the image's platform as the Makefile builds it. Each image has one
// SBOM, the one of its binary, naming the main module and each required
// module as go.mod and go.sum do. The binary for this machine, run with
// --version, prints the version.
func check(o checkOptions) error {
	want, err := readFinalStage(o.dockerfile)
	if err != nil {
		return err
	}
	if uid, _, _ := strings.Cut(want.user, ":"); uid != "65532" {
		return fmt.Errorf("%s: USER %s, want the numeric nonroot user 65532", o.dockerfile, want.user)
	}
	mod, err := readGoMod(o.gomod, o.require)
	if err != nil {
		return err
	}
	b, err := readLayout(o.dir, o.meta.version)
	if err != nil {
		return err
	}
	im, err := b.index.IndexManifest()
	if err != nil {
		return err
	}
	if err := checkAnnotations("the index's annotations", im.Annotations, o.meta); err != nil {
		return err
	}
	var got []string
	for _, d := range b.images {
		if d.Platform == nil {
			return fmt.Errorf("the index's manifest %s has no platform", d.Digest)
		}
		got = append(got, d.Platform.String())
	}
	var wantPlatforms []string
	for _, p := range o.platforms {
		wantPlatforms = append(wantPlatforms, p.String())
	}
	slices.Sort(got)
	slices.Sort(wantPlatforms)
	if !slices.Equal(got, wantPlatforms) {
		return fmt.Errorf("the index holds images for %q, want %q", got, wantPlatforms)
	}
	host := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	ran := false
	var first string
	for i, d := range b.images {
		binary, cfg, err := checkImage(b, d, want, o.meta)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Platform, err)
		}
		common, err := checkBuildSettings(binary, *d.Platform, o.meta)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", d.Platform, want.entrypoint[0], err)
		}
		if i == 0 {
			first = common
		} else if common != first {
			return fmt.Errorf("%s: %s is built unlike the one for %s: its build information has\n%s", d.Platform, want.entrypoint[0], b.images[0].Platform, lineDiff(common, first))
		}
		if err := checkSBOM(b, d, binary, mod, o); err != nil {
			return fmt.Errorf("%s: %w", d.Platform, err)
		}
		if d.Platform.Equals(host) {
			if err := checkVersion(binary, cfg, o.meta.version); err != nil {
				return fmt.Errorf("%s: %w", d.Platform, err)
			}
			ran = true
		}
	}
	if !ran {
		return fmt.Errorf("no image for %s, this machine, whose binary could be run", host.String())
	}
	return nil
}

// checkImage checks the image d of the index and returns its binary and
// configuration.
func checkImage(b *built, d v1.Descriptor, want stage, meta metadata) ([]byte, *v1.ConfigFile, error) {
	img, err := b.index.Image(d.Digest)
	if err != nil {
		return nil, nil, err
	}
	// Every blob against its digest, diff IDs against the layers.
	if err := validate.Image(img); err != nil {
		return nil, nil, fmt.Errorf("invalid image: %w", err)
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the manifest media type: %w", err)
	}
	if mt != types.OCIManifestSchema1 {
		return nil, nil, fmt.Errorf("manifest media type %q, want %q", mt, types.OCIManifestSchema1)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, nil, err
	}
	if err := checkAnnotations("the manifest's annotations", m.Annotations, meta); err != nil {
		return nil, nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	if err := checkConfig(cfg, *d.Platform, want, meta); err != nil {
		return nil, nil, err
	}
	binary, err := onlyFile(img, want.entrypoint[0])
	if err != nil {
		return nil, nil, err
	}
	arch, err := staticLinuxArch(binary)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", want.entrypoint[0], err)
	}
	if arch != d.Platform.Architecture {
		return nil, nil, fmt.Errorf("%s is an executable for %s", want.entrypoint[0], arch)
	}
	return binary, cfg, nil
}

// checkAnnotations checks that got are exactly the annotations of meta.
func checkAnnotations(what string, got map[string]string, meta metadata) error {
	want := meta.annotations()
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			errs = append(errs, fmt.Errorf("%s: %s is %q, want %q", what, k, got[k], want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			errs = append(errs, fmt.Errorf("%s: unexpected %s %q", what, k, got[k]))
		}
	}
	return errors.Join(errs...)
}

// checkBuildSettings checks, from the build information in the binary, that
// it was built as the Makefile builds it: for the platform, without cgo,
// with -trimpath (without which the digest depends on the checkout's path),
// and from the revision if the build recorded one. It returns the build
// information without what depends on the architecture, which must be the
// same for every platform.
func checkBuildSettings(binary []byte, platform v1.Platform, meta metadata) (string, error) {
	bi, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		return "", fmt.Errorf("reading the Go build information: %w", err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var errs []error
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "-trimpath"} {
		want := map[string]string{"GOOS": platform.OS, "GOARCH": platform.Architecture, "CGO_ENABLED": "0", "-trimpath": "true"}[k]
		if settings[k] != want {
			errs = append(errs, fmt.Errorf("built with %s=%q, want %q", k, settings[k], want))
		}
	}
	if rev, ok := settings["vcs.revision"]; ok && rev != meta.revision {
		errs = append(errs, fmt.Errorf("built from the commit %s, want %s", rev, meta.revision))
	}
	// -trimpath keeps -ldflags out of the build information, and only the
	// binary for this machine runs here: the version must at least be in
	// the others.
	if !bytes.Contains(binary, []byte(meta.version)) {
		errs = append(errs, fmt.Errorf("the version %s is nowhere in the binary", meta.version))
	}
	archLevel := "GO" + strings.ToUpper(platform.Architecture) + "="
	var common []string
	for _, line := range strings.Split(bi.String(), "\n") {
		if setting, ok := strings.CutPrefix(line, "build\t"); ok && (strings.HasPrefix(setting, "GOARCH=") || strings.HasPrefix(setting, archLevel)) {
			continue
		}
		common = append(common, line)
	}
	return strings.Join(common, "\n"), errors.Join(errs...)
}

// lineDiff lists the lines of a missing from b, with "+", and of b missing
// from a, with "-".
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "+ "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "- "+l)
		}
	}
	return strings.Join(out, "\n")
}

// checkVersion runs the binary with --version and checks that it prints the
// version.
func checkVersion(binary []byte, cfg *v1.ConfigFile, version string) error {
	out, err := runVersion(binary, cfg)
	if err != nil {
		return err
	}
	if out != version {
		return fmt.Errorf("%s --version printed %q, want %q", entrypoint, out, version)
	}
	return nil
}

// stage is what the checks read from the final stage of the Dockerfile.
type stage struct {
	user       string
	entrypoint []string
	copyDest   string
}

// readFinalStage reads USER, ENTRYPOINT (exec form) and the destination of
// COPY from the last FROM of a Dockerfile.
func readFinalStage(path string) (stage, error) {
	f, err := os.Open(path)
	if err != nil {
		return stage{}, err
	}
	defer f.Close()
	var s stage
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			line += cont + " "
			continue
		}
		line += text
		fields := strings.Fields(line)
		line = ""
		if len(fields) == 0 {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.Join(fields, " "), fields[0]))
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			s = stage{}
		case "USER":
			s.user = rest
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &s.entrypoint); err != nil {
				return stage{}, fmt.Errorf("%s: ENTRYPOINT %s is not in exec form: %w", path, rest, err)
			}
		case "COPY":
			s.copyDest = fields[len(fields)-1]
		}
	}
	if err := sc.Err(); err != nil {
		return stage{}, err
	}
	if s.user == "" || len(s.entrypoint) != 1 || s.copyDest != s.entrypoint[0] {
		return stage{}, fmt.Errorf("%s: the final stage must COPY the binary to the ENTRYPOINT's path and set USER; read %+v", path, s)
	}
	return s, nil
}

func checkConfig(cfg *v1.ConfigFile, platform v1.Platform, want stage, meta metadata) error {
	var errs []error
	if cfg.OS != platform.OS || cfg.Architecture != platform.Architecture {
		errs = append(errs, fmt.Errorf("configuration for %s/%s, want %s", cfg.OS, cfg.Architecture, platform.String()))
	}
	if !slices.Equal(cfg.Config.Entrypoint, want.entrypoint) {
		errs = append(errs, fmt.Errorf("entrypoint %q, want %q", cfg.Config.Entrypoint, want.entrypoint))
	}
	if len(cfg.Config.Cmd) != 0 {
		errs = append(errs, fmt.Errorf("cmd %q, want none: arguments come from the pod spec", cfg.Config.Cmd))
	}
	if cfg.Config.User != want.user {
		errs = append(errs, fmt.Errorf("user %q, want %q", cfg.Config.User, want.user))
	}
	if err := checkAnnotations("the configuration's labels", cfg.Config.Labels, meta); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// onlyFile is the content of the file at path, which must be the image's
// only entry: a regular executable owned by root.
func onlyFile(img v1.Image, path string) ([]byte, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var content []byte
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the image's file system: %w", err)
		}
		names = append(names, hdr.Name)
		if "/"+strings.TrimPrefix(hdr.Name, "/") != path {
			continue
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Mode&0o111 == 0 || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Mode&0o022 != 0 {
			return nil, fmt.Errorf("%s: type %c, mode %o, owner %d:%d; want an executable regular file owned and writable by root only", path, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid)
		}
		if content, err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
	if len(names) != 1 || content == nil {
		return nil, fmt.Errorf("the image holds %q, want %s alone", names, path)
	}
	return content, nil
}

// runVersion runs binary with --version on this machine, as the image's user
// when it can switch users, and returns what it prints.
func runVersion(binary []byte, cfg *v1.ConfigFile) (string, error) {
	dir, err := os.MkdirTemp("", "image-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "binary")
	if err := os.WriteFile(path, binary, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	// An empty environment, as in the image.
	cmd.Env = []string{}
	if os.Geteuid() == 0 {
		uid, gid, err := numericUser(cfg.Config.User)
		if err != nil {
			return "", err
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("running the image's binary with --version: %w\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

func numericUser(s string) (uid, gid uint32, err error) {
	u, g, _ := strings.Cut(s, ":")
	uu, err := strconv.ParseUint(u, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("user %q is not numeric", s)
	}
	gg, err := strconv.ParseUint(g, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("group of user %q is not numeric", s)
	}
	return uint32(uu), uint32(gg), nil
}
