package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

func checkCommand(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	dir := fs.String("layout", "", "Directory of the OCI image layout to check.")
	dockerfile := fs.String("dockerfile", "", "The Dockerfile whose final stage the image must match.")
	version := fs.String("version", "", "The version the image is tagged with and its binary must print.")
	_ = fs.Parse(args)
	if *dir == "" || *dockerfile == "" || *version == "" {
		return errors.New("check needs -layout, -dockerfile and -version")
	}
	if err := check(*dir, *dockerfile, *version); err != nil {
		return fmt.Errorf("%s:%s: %w", *dir, *version, err)
	}
	fmt.Printf("image: %s:%s runs %s as user %s and prints its version\n", *dir, *version, entrypoint, user)
	return nil
}

// check verifies the image tagged version in the layout at dir: it is what
// the final stage of dockerfile describes (the binary copied to the
// entrypoint, the user), the user is 65532, the binary is the image's only
// file, and run with --version it prints version.
func check(dir, dockerfile, version string) error {
	want, err := readFinalStage(dockerfile)
	if err != nil {
		return err
	}
	if uid, _, _ := strings.Cut(want.user, ":"); uid != "65532" {
		return fmt.Errorf("%s: USER %s, want the numeric nonroot user 65532", dockerfile, want.user)
	}
	img, err := taggedImage(dir, version)
	if err != nil {
		return err
	}
	// Every blob against its digest, diff IDs against the layers.
	if err := validate.Image(img); err != nil {
		return fmt.Errorf("invalid image: %w", err)
	}
	mt, err := img.MediaType()
	if err != nil {
		return fmt.Errorf("reading the manifest media type: %w", err)
	}
	if mt != types.OCIManifestSchema1 {
		return fmt.Errorf("manifest media type %q, want %q", mt, types.OCIManifestSchema1)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if err := checkConfig(cfg, want, version); err != nil {
		return err
	}
	binary, err := onlyFile(img, want.entrypoint[0])
	if err != nil {
		return err
	}
	if _, err := staticLinuxArch(binary); err != nil {
		return fmt.Errorf("%s: %w", want.entrypoint[0], err)
	}
	out, err := runVersion(binary, cfg)
	if err != nil {
		return err
	}
	if out != version {
		return fmt.Errorf("%s --version printed %q, want %q", want.entrypoint[0], out, version)
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

// taggedImage is the image whose ref.name is tag, the only one in the layout.
func taggedImage(dir, tag string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) != 1 {
		return nil, fmt.Errorf("the layout holds %d manifests, want 1", len(im.Manifests))
	}
	d := im.Manifests[0]
	if got := d.Annotations[specv1.AnnotationRefName]; got != tag {
		return nil, fmt.Errorf("the image is tagged %q, want %q", got, tag)
	}
	return p.Image(d.Digest)
}

func checkConfig(cfg *v1.ConfigFile, want stage, version string) error {
	var errs []error
	if cfg.OS != "linux" {
		errs = append(errs, fmt.Errorf("os %q, want linux", cfg.OS))
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
	if got := cfg.Config.Labels[specv1.AnnotationVersion]; got != version {
		errs = append(errs, fmt.Errorf("version label %q, want %q", got, version))
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
	if cfg.Architecture != runtime.GOARCH || runtime.GOOS != "linux" {
		return "", fmt.Errorf("cannot run a linux/%s binary on %s/%s", cfg.Architecture, runtime.GOOS, runtime.GOARCH)
	}
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
