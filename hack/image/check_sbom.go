package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/mod/modfile"
)

// goModule is what go.mod and go.sum say of the main module and of the
// modules the SBOM must name.
type goModule struct {
	path     string
	required []requiredModule
}

type requiredModule struct {
	path, version, sum string
}

// readGoMod reads the main module's path from gomod, and for each of
// require the version gomod requires and its hash in the go.sum beside it.
func readGoMod(gomod string, require []string) (goModule, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return goModule{}, err
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		return goModule{}, err
	}
	if f.Module == nil {
		return goModule{}, fmt.Errorf("%s has no module directive", gomod)
	}
	m := goModule{path: f.Module.Mod.Path}
	for _, path := range require {
		i := slices.IndexFunc(f.Require, func(r *modfile.Require) bool { return r.Mod.Path == path })
		if i < 0 {
			return goModule{}, fmt.Errorf("%s does not require %s", gomod, path)
		}
		version := f.Require[i].Mod.Version
		sum, err := goSum(filepath.Join(filepath.Dir(gomod), "go.sum"), path, version)
		if err != nil {
			return goModule{}, err
		}
		m.required = append(m.required, requiredModule{path: path, version: version, sum: sum})
	}
	return m, nil
}

// goSum is the hash of the module's content (not of its go.mod) in go.sum.
func goSum(file, path, version string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 3 && fields[0] == path && fields[1] == version {
			return fields[2], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s has no hash of %s %s", file, path, version)
}

// checkSBOM checks the SBOM artifact of the image d: there is one; it is an
// OCI 1.1 artifact of type SPDX whose layer is the copy in the SBOM
// directory; it is the SBOM of binary, as build makes it; and, read as SPDX,
// it describes the main module of go.mod as binary and names each required
// module at the version of go.mod with the hash of go.sum.
func checkSBOM(b *built, d v1.Descriptor, binary []byte, mod goModule, o checkOptions) error {
	ds := b.sboms[d.Digest]
	if len(ds) != 1 {
		return fmt.Errorf("%d SBOMs refer to the image, want 1", len(ds))
	}
	art, err := b.path.Image(ds[0].Digest)
	if err != nil {
		return err
	}
	m, err := art.Manifest()
	if err != nil {
		return err
	}
	if m.ArtifactType != spdxMediaType || m.Config.MediaType != types.OCIEmptyJSON || len(m.Layers) != 1 || m.Layers[0].MediaType != spdxMediaType {
		return fmt.Errorf("the SBOM's manifest has the artifact type %q, the configuration %q and the layers %v; want %q, %q and one layer of %[4]q",
			m.ArtifactType, m.Config.MediaType, m.Layers, spdxMediaType, types.OCIEmptyJSON)
	}
	cfg, err := art.RawConfigFile()
	if err != nil {
		return fmt.Errorf("the SBOM's configuration: %w", err)
	}
	if string(cfg) != "{}" {
		return fmt.Errorf("the SBOM's configuration is %q, want {}", cfg)
	}
	sbom, err := blob(art, m.Layers[0])
	if err != nil {
		return fmt.Errorf("the SBOM's layer: %w", err)
	}
	copyPath := filepath.Join(o.sbomDir, sbomFileName(*d.Platform))
	c, err := os.ReadFile(copyPath)
	if err != nil {
		return fmt.Errorf("the SBOM's copy: %w", err)
	}
	if !bytes.Equal(c, sbom) {
		return fmt.Errorf("%s is not the SBOM in the image", copyPath)
	}
	fresh, err := spdxSBOM(binary, *d.Platform, o.meta)
	if err != nil {
		return err
	}
	if !bytes.Equal(fresh, sbom) {
		return errors.New("the SBOM is not the one of the image's binary")
	}
	return checkSPDX(sbom, binary, mod, o.meta.version)
}

// blob is the content of the layer d of img, checked against its digest.
func blob(img v1.Image, d v1.Descriptor) ([]byte, error) {
	l, err := img.LayerByDigest(d.Digest)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if h, _, err := v1.SHA256(bytes.NewReader(data)); err != nil || h != d.Digest {
		return nil, fmt.Errorf("content of digest %s, want %s", h, d.Digest)
	}
	return data, nil
}

// checkSPDX reads the SBOM as an SPDX 2.3 document, independently of how
// build writes it.
func checkSPDX(sbom, binary []byte, mod goModule, version string) error {
	var doc spdxDocument
	if err := json.Unmarshal(sbom, &doc); err != nil {
		return fmt.Errorf("the SBOM is not JSON: %w", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" || doc.SPDXID != "SPDXRef-DOCUMENT" || doc.DocumentNamespace == "" {
		return fmt.Errorf("the SBOM is %q, data license %q, ID %q, namespace %q; want an SPDX-2.3 document", doc.SPDXVersion, doc.DataLicense, doc.SPDXID, doc.DocumentNamespace)
	}
	packages := map[string]spdxPackage{}
	for _, p := range doc.Packages {
		if _, dup := packages[p.SPDXID]; dup {
			return fmt.Errorf("the SBOM has two packages %s", p.SPDXID)
		}
		packages[p.SPDXID] = p
	}
	var described []spdxPackage
	for _, r := range doc.Relationships {
		if _, ok := packages[r.RelatedSPDXElement]; !ok {
			return fmt.Errorf("the SBOM relates %s to %s, which is no package in it", r.SPDXElementID, r.RelatedSPDXElement)
		}
		if r.SPDXElementID == doc.SPDXID && r.RelationshipType == "DESCRIBES" {
			described = append(described, packages[r.RelatedSPDXElement])
		}
	}
	sum := sha256.Sum256(binary)
	binarySum := spdxChecksum{Algorithm: "SHA256", ChecksumValue: hex.EncodeToString(sum[:])}
	if len(described) != 1 || described[0].Name != mod.path || described[0].VersionInfo != version || !slices.Contains(described[0].Checksums, binarySum) {
		return fmt.Errorf("the SBOM describes %+v, want %s %s with the binary's SHA256 %s", described, mod.path, version, binarySum.ChecksumValue)
	}
	for _, r := range mod.required {
		purl := spdxExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: "pkg:golang/" + r.path + "@" + r.version}
		found := false
		for _, p := range doc.Packages {
			if p.Name != r.path {
				continue
			}
			found = true
			if p.VersionInfo != r.version || !containsRef(p.ExternalRefs, purl) || !containsRef(p.ExternalRefs, spdxExternalRef{ReferenceCategory: "OTHER", ReferenceType: goSumRefType, ReferenceLocator: r.sum}) {
				return fmt.Errorf("the SBOM names %s at %q with %+v; want %s, the purl %s and the go.sum hash %s", r.path, p.VersionInfo, p.ExternalRefs, r.version, purl.ReferenceLocator, r.sum)
			}
		}
		if !found {
			return fmt.Errorf("the SBOM does not name %s", r.path)
		}
	}
	return nil
}

// containsRef compares external references without their comments.
func containsRef(refs []spdxExternalRef, r spdxExternalRef) bool {
	return slices.ContainsFunc(refs, func(x spdxExternalRef) bool {
		x.Comment = ""
		return x == r
	})
}
