package server

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"

	"deployobject.dev/controller/pkg/identity"
)

// servingCert is the metrics server's certificate: either the pair of
// files in --metrics-cert-path, read again at every TLS handshake, so that
// a rotated pair (a cert-manager Secret the kubelet updates) is served from
// the next connection on without a restart, a watch or a timer; or, with no
// files, a self-signed certificate generated at start. Handshakes are rare
// (a scraper keeps its connection) and each costs a signature, far more
// than reading two small files.
type servingCert struct {
	certFile, keyFile string

	mu sync.Mutex
	// served is the pair in use. A pair that fails to load (one file
	// written, the other not yet) leaves it in use.
	served *tls.Certificate
	// certPEM and keyPEM are the files as last loaded, whether they
	// loaded or not: unchanged files are not parsed again.
	certPEM, keyPEM []byte
	// failure is the last failure logged, so that a pair that stays
	// broken is logged once.
	failure string
}

// newServingCert loads certName and keyName in certDir, or, with no
// certDir, generates a self-signed certificate.
func newServingCert(certDir, certName, keyName string) (*servingCert, error) {
	if certDir == "" {
		certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(identity.ControllerName, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
		if err != nil {
			return nil, fmt.Errorf("generating a self-signed metrics certificate: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("loading the self-signed metrics certificate: %w", err)
		}
		return &servingCert{served: &pair}, nil
	}
	c := &servingCert{certFile: filepath.Join(certDir, certName), keyFile: filepath.Join(certDir, keyName)}
	certPEM, keyPEM, err := c.read()
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the metrics certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.served, c.certPEM, c.keyPEM = &pair, certPEM, keyPEM
	return c, nil
}

// tlsConfig serves the certificate over TLS 1.2 or later, logging a pair
// that fails to load to logger. HTTP/2 is not offered: the metrics server
// needs none, and HTTP/2 has brought denial-of-service flaws (rapid reset)
// that HTTP/1.1 does not have.
func (c *servingCert) tlsConfig(logger klog.Logger) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.current(logger), nil
		},
	}
}

// current reads the files again and serves what they hold when it differs
// from what was last loaded and loads; otherwise the pair in use.
func (c *servingCert) current(logger klog.Logger) *tls.Certificate {
	if c.certFile == "" {
		return c.served
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	certPEM, keyPEM, err := c.read()
	if err == nil {
		if bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
			return c.served
		}
		c.certPEM, c.keyPEM = certPEM, keyPEM
		var pair tls.Certificate
		if pair, err = tls.X509KeyPair(certPEM, keyPEM); err == nil {
			c.served, c.failure = &pair, ""
			logger.Info("Serving a new metrics certificate", "certFile", c.certFile, "keyFile", c.keyFile)
			return c.served
		}
	}
	if msg := err.Error(); msg != c.failure {
		c.failure = msg
		logger.Error(err, "Keeping the previous metrics certificate", "certFile", c.certFile, "keyFile", c.keyFile)
	}
	return c.served
}

func (c *servingCert) read() ([]byte, []byte, error) {
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the metrics certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the metrics key: %w", err)
	}
	return certPEM, keyPEM, nil
}
