package server

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func TestMetricsServesTLSWithSelfSignedCertificate(t *testing.T) {
	c, err := newServingCert("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	ts.TLS = c.tlsConfig(klog.Background())
	// The refused TLS 1.1 handshake is logged by the server otherwise.
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, maxVersion := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		client.Transport.(*http.Transport).TLSClientConfig.MaxVersion = maxVersion
		client.CloseIdleConnections()
		resp, err := client.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.ProtoMajor != 1 {
			t.Errorf("GET over TLS: %d, TLS %v, protocol %s; want 200 over TLS with HTTP/1.1", resp.StatusCode, resp.TLS != nil, resp.Proto)
		}
	}
	client.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tls.VersionTLS11
	client.CloseIdleConnections()
	if resp, err := client.Get(ts.URL); err == nil {
		resp.Body.Close()
		t.Error("TLS 1.1 was accepted")
	}
}

// TestMetricsCertificateFilesAreReloaded: a rotated pair is served from
// the next handshake on, without a restart; a broken or missing pair
// leaves the previous one in use and is logged once.
func TestMetricsCertificateFilesAreReloaded(t *testing.T) {
	dir := t.TempDir()
	if _, err := newServingCert(dir, "tls.crt", "tls.key"); err == nil {
		t.Error("newServingCert with no files in the directory succeeded")
	}
	writePair(t, dir, "first")
	c, err := newServingCert(dir, "tls.crt", "tls.key")
	if err != nil {
		t.Fatal(err)
	}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer()
	cfg := c.tlsConfig(logger)
	for _, step := range []struct {
		name   string
		change func()
		want   string
		// logged is the message of the one entry logged at this step,
		// if any.
		logged string
	}{
		{"unchanged", func() {}, "first", ""},
		{"rotated", func() { writePair(t, dir, "second") }, "second", "Serving a new metrics certificate"},
		{"a half-written key", func() { writeFile(t, filepath.Join(dir, "tls.key"), "half-written") }, "second", "Keeping the previous metrics certificate"},
		{"the key removed", func() { removeFile(t, filepath.Join(dir, "tls.key")) }, "second", "Keeping the previous metrics certificate"},
		{"rotated again", func() { writePair(t, dir, "third") }, "third", "Serving a new metrics certificate"},
	} {
		before := len(logs.Data())
		step.change()
		// The second handshake finds the files as the first left them.
		for range 2 {
			if got := servedName(t, cfg); got != step.want {
				t.Errorf("%s: serving %q, want %q", step.name, got, step.want)
			}
		}
		var logged []string
		for _, e := range logs.Data()[before:] {
			logged = append(logged, e.Message)
		}
		var want []string
		if step.logged != "" {
			want = []string{step.logged}
		}
		if !slices.Equal(logged, want) {
			t.Errorf("%s: logged %q, want %q once", step.name, logged, step.logged)
		}
	}
}

// TestMetricsCertificateSecretVolumeUpdate: the kubelet updates a Secret
// volume by pointing the ..data link at a new directory; the files' paths
// stay the same.
func TestMetricsCertificateSecretVolumeUpdate(t *testing.T) {
	dir := t.TempDir()
	for _, version := range []string{"v1", "v2"} {
		if err := os.Mkdir(filepath.Join(dir, version), 0o700); err != nil {
			t.Fatal(err)
		}
		writePair(t, filepath.Join(dir, version), version)
	}
	link := func(target string) {
		t.Helper()
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	link("v1")
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := newServingCert(dir, "tls.crt", "tls.key")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.tlsConfig(klog.Background())
	if got := servedName(t, cfg); got != "v1" {
		t.Fatalf("serving %q, want v1", got)
	}
	link("v2")
	if got := servedName(t, cfg); got != "v2" {
		t.Errorf("after the volume's update serving %q, want v2", got)
	}
}

// servedName is the common name (without the generator's suffix) of the
// certificate cfg serves.
func servedName(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	pair, err := cfg.GetCertificate(&tls.ClientHelloInfo{ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(leaf.Subject.CommonName, "@")
	return name
}

// writePair writes a self-signed certificate for host and its key into dir.
func writePair(t *testing.T, dir, host string) {
	t.Helper()
	c, k, err := cert.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "tls.crt"), string(c))
	writeFile(t, filepath.Join(dir, "tls.key"), string(k))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func removeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
