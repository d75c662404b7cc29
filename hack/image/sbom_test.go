package main

import (
	"crypto/sha256"
	"encoding/json"
	"regexp"
	"runtime/debug"
	"slices"
	"testing"
)

func testBuildInfo() *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "deployobject.dev/controller",
		Main:      debug.Module{Path: "deployobject.dev/controller", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "k8s.io/client-go", Version: "v0.36.3", Sum: "h1:client"},
			{Path: "github.com/example/old", Version: "v2.0.0+incompatible", Sum: "h1:old"},
			{Path: "github.com/example/forked", Version: "v1.0.0", Sum: "h1:upstream",
				Replace: &debug.Module{Path: "github.com/fork/forked", Version: "v1.0.1", Sum: "h1:fork"}},
			{Path: "github.com/example/local", Version: "v1.0.0", Replace: &debug.Module{Path: "../local"}},
		},
		Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "GOARCH", Value: "arm64"}},
	}
}

func parseSPDX(t *testing.T, data []byte) (spdxDocument, map[string]spdxPackage) {
	t.Helper()
	var doc spdxDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	byName := map[string]spdxPackage{}
	for _, p := range doc.Packages {
		byName[p.Name] = p
	}
	return doc, byName
}

func refs(p spdxPackage, category string) []string {
	var out []string
	for _, r := range p.ExternalRefs {
		if r.ReferenceCategory == category {
			out = append(out, r.ReferenceType+" "+r.ReferenceLocator)
		}
	}
	return out
}

func TestSPDXFromBuildInfo(t *testing.T) {
	meta := testMeta()
	sum := sha256.Sum256([]byte("binary"))
	data, err := spdxFromBuildInfo(testBuildInfo(), sum, arm64, meta)
	if err != nil {
		t.Fatal(err)
	}
	doc, byName := parseSPDX(t, data)

	main := byName["deployobject.dev/controller"]
	if main.VersionInfo != meta.version || !slices.Equal(refs(main, "PACKAGE-MANAGER"), []string{"purl pkg:golang/deployobject.dev/controller@v1.2.3"}) {
		t.Errorf("main package %+v, want version %s and its purl", main, meta.version)
	}
	if len(main.Checksums) != 1 || main.Checksums[0].Algorithm != "SHA256" || main.Checksums[0].ChecksumValue != "9a3a45d01531a20e89ac6ae10b0b0beb0492acd7216a368aa062d1a5fecaf9cd" {
		t.Errorf("main package checksums %+v, want the binary's SHA256", main.Checksums)
	}
	if len(main.Annotations) != 1 || main.Annotations[0].Comment != "Built by go1.26.8 for linux/arm64 with these settings:\n-trimpath=true\nGOARCH=arm64" {
		t.Errorf("main package annotations %+v, want the Go version and the build settings", main.Annotations)
	}
	if stdlib := byName["stdlib"]; stdlib.VersionInfo != "go1.26.8" || !slices.Equal(refs(stdlib, "PACKAGE-MANAGER"), []string{"purl pkg:golang/stdlib@1.26.8"}) {
		t.Errorf("stdlib %+v, want go1.26.8 and the purl scanners match Go's advisories against", stdlib)
	}

	for _, tc := range []struct {
		name, version, comment string
		purl, other            []string
	}{
		{name: "k8s.io/client-go", version: "v0.36.3", purl: []string{"purl pkg:golang/k8s.io/client-go@v0.36.3"}, other: []string{"go-sum h1:client"}},
		{name: "github.com/example/old", version: "v2.0.0+incompatible", purl: []string{"purl pkg:golang/github.com/example/old@v2.0.0%2Bincompatible"}, other: []string{"go-sum h1:old"}},
		{name: "github.com/fork/forked", version: "v1.0.1", comment: "replaces github.com/example/forked@v1.0.0", purl: []string{"purl pkg:golang/github.com/fork/forked@v1.0.1"}, other: []string{"go-sum h1:fork"}},
		{name: "github.com/example/local", comment: "replaced by the directory ../local"},
	} {
		p, ok := byName[tc.name]
		if !ok {
			t.Errorf("no package %s", tc.name)
			continue
		}
		if p.VersionInfo != tc.version || p.Comment != tc.comment || !slices.Equal(refs(p, "PACKAGE-MANAGER"), tc.purl) || !slices.Equal(refs(p, "OTHER"), tc.other) {
			t.Errorf("package %+v, want version %q, comment %q, refs %q and %q", p, tc.version, tc.comment, tc.purl, tc.other)
		}
		// A go.sum hash is no digest of a package file.
		if len(p.Checksums) != 0 {
			t.Errorf("package %s has checksums %+v", tc.name, p.Checksums)
		}
	}
	if _, ok := byName["github.com/example/forked"]; ok {
		t.Error("the replaced module is listed")
	}

	validID := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	ids := map[string]bool{}
	for _, p := range doc.Packages {
		if !validID.MatchString(p.SPDXID) || ids[p.SPDXID] {
			t.Errorf("package %s has the SPDX ID %q, invalid or taken", p.Name, p.SPDXID)
		}
		ids[p.SPDXID] = true
		if p.FilesAnalyzed {
			t.Errorf("package %s has files analyzed", p.Name)
		}
	}
	var linked []string
	for _, r := range doc.Relationships {
		if !ids[r.RelatedSPDXElement] {
			t.Errorf("relationship %+v to no package", r)
		}
		if r.SPDXElementID == mainID && r.RelationshipType == "STATIC_LINK" {
			linked = append(linked, r.RelatedSPDXElement)
		}
	}
	if len(linked) != len(doc.Packages)-1 {
		t.Errorf("the binary links %d packages, want the %d others", len(linked), len(doc.Packages)-1)
	}
	if !regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(doc.DocumentNamespace) {
		t.Errorf("namespace %q, want a version 8 UUID URN", doc.DocumentNamespace)
	}

	again, err := spdxFromBuildInfo(testBuildInfo(), sum, arm64, meta)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Error("two SBOMs of one binary differ")
	}
	other, err := spdxFromBuildInfo(testBuildInfo(), sha256.Sum256([]byte("another binary")), arm64, meta)
	if err != nil {
		t.Fatal(err)
	}
	if otherDoc, _ := parseSPDX(t, other); otherDoc.DocumentNamespace == doc.DocumentNamespace {
		t.Errorf("the SBOMs of two binaries share the namespace %s", doc.DocumentNamespace)
	}
}

func TestSPDXIDsOfLookalikePaths(t *testing.T) {
	bi := testBuildInfo()
	bi.Deps = []*debug.Module{
		{Path: "example.com/a/b-c", Version: "v1.0.0"},
		{Path: "example.com/a-b/c", Version: "v1.0.0"},
	}
	data, err := spdxFromBuildInfo(bi, sha256.Sum256(nil), amd64, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	_, byName := parseSPDX(t, data)
	if a, b := byName["example.com/a/b-c"].SPDXID, byName["example.com/a-b/c"].SPDXID; a == b {
		t.Errorf("two modules have the SPDX ID %s", a)
	}
}
