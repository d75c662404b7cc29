package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

const (
	// spdxMediaType is the SBOM's media type, and its artifact's type.
	spdxMediaType = "application/spdx+json"
	// creator names this program in the SBOM.
	creator = "Tool: deployobject.dev/controller/hack/image"
	// goSumRefType is the type of the external reference holding a
	// module's go.sum hash (see goModulePackage).
	goSumRefType = "go-sum"
	mainID       = "SPDXRef-Package-main"
)

// The SPDX 2.3 JSON document, with the fields this program writes.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string `json:"name"`
	SPDXID           string `json:"SPDXID"`
	VersionInfo      string `json:"versionInfo,omitempty"`
	PackageFileName  string `json:"packageFileName,omitempty"`
	DownloadLocation string `json:"downloadLocation"`
	// FilesAnalyzed is written even when false: SPDX 2.3 reads a missing
	// field as true, which would demand a verification code.
	FilesAnalyzed         bool              `json:"filesAnalyzed"`
	Checksums             []spdxChecksum    `json:"checksums,omitempty"`
	SourceInfo            string            `json:"sourceInfo,omitempty"`
	LicenseDeclared       string            `json:"licenseDeclared,omitempty"`
	Comment               string            `json:"comment,omitempty"`
	ExternalRefs          []spdxExternalRef `json:"externalRefs,omitempty"`
	PrimaryPackagePurpose string            `json:"primaryPackagePurpose,omitempty"`
	Annotations           []spdxAnnotation  `json:"annotations,omitempty"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
	Comment           string `json:"comment,omitempty"`
}

type spdxAnnotation struct {
	AnnotationDate string `json:"annotationDate"`
	AnnotationType string `json:"annotationType"`
	Annotator      string `json:"annotator"`
	Comment        string `json:"comment"`
}

type spdxRelationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// spdxSBOM is the SPDX 2.3 JSON SBOM of a Go binary for platform, read from
// the build information the Go linker embeds in it: the main module, the Go
// version (as the package "stdlib"), every module linked in, and the build
// settings.
func spdxSBOM(binary []byte, platform v1.Platform, meta metadata) ([]byte, error) {
	bi, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		return nil, fmt.Errorf("reading the Go build information: %w", err)
	}
	return spdxFromBuildInfo(bi, sha256.Sum256(binary), platform, meta)
}

func spdxFromBuildInfo(bi *debug.BuildInfo, binarySum [sha256.Size]byte, platform v1.Platform, meta metadata) ([]byte, error) {
	created := meta.created.Format(time.RFC3339)
	var settings strings.Builder
	fmt.Fprintf(&settings, "Built by %s for %s with these settings:", bi.GoVersion, platform.String())
	for _, s := range bi.Settings {
		fmt.Fprintf(&settings, "\n%s=%s", s.Key, s.Value)
	}
	main := spdxPackage{
		Name:             bi.Main.Path,
		SPDXID:           mainID,
		VersionInfo:      meta.version,
		PackageFileName:  strings.TrimPrefix(entrypoint, "/"),
		DownloadLocation: "NOASSERTION",
		Checksums:        []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: hex.EncodeToString(binarySum[:])}},
		LicenseDeclared:  license,
		ExternalRefs:     []spdxExternalRef{purlRef(bi.Main.Path, meta.version)},
		// The binary, which links everything below.
		PrimaryPackagePurpose: "APPLICATION",
		Annotations: []spdxAnnotation{{
			AnnotationDate: created,
			AnnotationType: "OTHER",
			Annotator:      creator,
			Comment:        settings.String(),
		}},
	}
	if meta.revision != "" {
		main.SourceInfo = "built from the commit " + meta.revision
		if meta.source != "" {
			main.SourceInfo += " of " + meta.source
		}
	}
	// Go's version is the standard library's, under the name and purl that
	// vulnerability scanners match Go's advisories against.
	goVersion, _, _ := strings.Cut(bi.GoVersion, " ")
	stdlib := spdxPackage{
		Name:                  "stdlib",
		SPDXID:                "SPDXRef-Package-stdlib",
		VersionInfo:           goVersion,
		DownloadLocation:      "NOASSERTION",
		ExternalRefs:          []spdxExternalRef{purlRef("stdlib", strings.TrimPrefix(goVersion, "go"))},
		PrimaryPackagePurpose: "LIBRARY",
	}
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3",
		DataLicense: "CC0-1.0",
		SPDXID:      "SPDXRef-DOCUMENT",
		Name:        fmt.Sprintf("%s %s %s", title, meta.version, platform.String()),
		CreationInfo: spdxCreationInfo{
			Created:  created,
			Creators: []string{creator},
		},
		Packages: []spdxPackage{main, stdlib},
		Relationships: []spdxRelationship{
			{SPDXElementID: "SPDXRef-DOCUMENT", RelationshipType: "DESCRIBES", RelatedSPDXElement: mainID},
			{SPDXElementID: mainID, RelationshipType: "STATIC_LINK", RelatedSPDXElement: stdlib.SPDXID},
		},
	}
	for _, dep := range bi.Deps {
		p := goModulePackage(dep)
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelationship{SPDXElementID: mainID, RelationshipType: "STATIC_LINK", RelatedSPDXElement: p.SPDXID})
	}
	// The namespace must be unique to the document, and the same for the
	// same document: a UUID made from the document's content.
	content, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	doc.DocumentNamespace = "urn:uuid:" + contentUUID(content)
	return json.MarshalIndent(doc, "", "  ")
}

// goModulePackage is the SPDX package of a module linked into the binary:
// the one a replace directive put in its place, if any.
//
// The module's go.sum hash ("h1:...") is an external reference and not an
// SPDX checksum: it is SHA-256 over a list of the SHA-256 sums of the
// module's files, not the digest of any one file, which is what an SPDX
// checksum of a package is.
func goModulePackage(dep *debug.Module) spdxPackage {
	mod, comment := *dep, ""
	if r := dep.Replace; r != nil {
		if r.Version == "" {
			mod.Version, mod.Sum = "", ""
			comment = "replaced by the directory " + r.Path
		} else {
			mod = *r
			comment = fmt.Sprintf("replaces %s@%s", dep.Path, dep.Version)
		}
	}
	p := spdxPackage{
		Name:                  mod.Path,
		SPDXID:                spdxID(mod.Path, mod.Version),
		VersionInfo:           mod.Version,
		DownloadLocation:      "NOASSERTION",
		Comment:               comment,
		PrimaryPackagePurpose: "LIBRARY",
	}
	if mod.Version != "" {
		p.ExternalRefs = append(p.ExternalRefs, purlRef(mod.Path, mod.Version))
	}
	if mod.Sum != "" {
		p.ExternalRefs = append(p.ExternalRefs, spdxExternalRef{
			ReferenceCategory: "OTHER",
			ReferenceType:     goSumRefType,
			ReferenceLocator:  mod.Sum,
			Comment:           "the module's hash in go.sum (the dirhash h1: SHA-256 over the SHA-256 sums of its files)",
		})
	}
	return p
}

// spdxID is a readable SPDX ID for a module version; SPDX IDs allow only
// letters, digits, '.' and '-'. The hash of the original keeps apart the
// paths that map to the same characters.
func spdxID(path, version string) string {
	id := path + "-" + version
	sum := sha256.Sum256([]byte(path + "@" + version))
	return "SPDXRef-Package-go-" + strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, id) + "-" + hex.EncodeToString(sum[:4])
}

// purlRef is the package URL of a Go module (or of "stdlib").
func purlRef(path, version string) spdxExternalRef {
	segments := strings.Split(path, "/")
	for i, s := range segments {
		segments[i] = purlEscape(s)
	}
	purl := "pkg:golang/" + strings.Join(segments, "/")
	if version != "" {
		purl += "@" + purlEscape(version)
	}
	return spdxExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: purl}
}

// purlEscape percent-encodes what a purl component may not hold as is,
// such as the '+' of "+incompatible".
func purlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c == '.' || c == '-' || c == '_' || c == '~' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// contentUUID is a version 8 UUID (RFC 9562) made of the SHA-256 of content.
func contentUUID(content []byte) string {
	u := sha256.Sum256(content)
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// sbomArtifact is the OCI 1.1 artifact of an SBOM: a manifest of type
// spdxMediaType with the empty configuration, the SBOM as its one layer, and
// subject as its subject, so that registries list it as a referrer of
// subject.
func sbomArtifact(sbom []byte, fileName string, subject v1.Image, meta metadata) (v1.Image, error) {
	sub, err := partial.Descriptor(subject)
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(sbom, spdxMediaType)
	ld, err := partial.Descriptor(layer)
	if err != nil {
		return nil, err
	}
	ld.Annotations = map[string]string{specv1.AnnotationTitle: fileName}
	config := []byte("{}")
	configDigest, configSize, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  spdxMediaType,
		Config:        v1.Descriptor{MediaType: types.OCIEmptyJSON, Digest: configDigest, Size: configSize},
		Layers:        []v1.Descriptor{*ld},
		// Clients sort referrers by this annotation.
		Annotations: map[string]string{specv1.AnnotationCreated: meta.created.Format(time.RFC3339)},
		Subject:     &v1.Descriptor{MediaType: sub.MediaType, Digest: sub.Digest, Size: sub.Size},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(artifact{manifest: raw, config: config, layer: layer})
}

// artifact is an image whose configuration is not an image configuration,
// which the images of go-containerregistry's mutate package cannot hold.
type artifact struct {
	manifest []byte
	config   []byte
	layer    v1.Layer
}

func (a artifact) RawConfigFile() ([]byte, error)      { return a.config, nil }
func (a artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }
func (a artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	d, err := a.layer.Digest()
	if err != nil {
		return nil, err
	}
	if d != h {
		return nil, fmt.Errorf("the SBOM artifact has no layer %s", h)
	}
	return a.layer, nil
}
