package monitoring

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	certComponent = "../../deploy/components/metrics-cert-manager"
	// operatingPage shows the kustomizations that add the certificate.
	operatingPage = "docs/operating.md"
	// servingCertificate is the Certificate of the metrics server.
	servingCertificate = "deployobject-controller-metrics"
	// metricsService is the monitoring component's Service, whose name the
	// serving certificate carries.
	metricsService = "deployobject-controller-metrics"
)

type certificateSpec struct {
	SecretName  string   `json:"secretName"`
	IsCA        bool     `json:"isCA"`
	DNSNames    []string `json:"dnsNames"`
	Usages      []string `json:"usages"`
	Duration    string   `json:"duration"`
	RenewBefore string   `json:"renewBefore"`
	PrivateKey  struct {
		Algorithm      string `json:"algorithm"`
		Size           int    `json:"size"`
		RotationPolicy string `json:"rotationPolicy"`
	} `json:"privateKey"`
	IssuerRef struct {
		Name  string `json:"name"`
		Kind  string `json:"kind"`
		Group string `json:"group"`
	} `json:"issuerRef"`
}

type issuerSpec struct {
	SelfSigned *struct{} `json:"selfSigned"`
	CA         *struct {
		SecretName string `json:"secretName"`
	} `json:"ca"`
}

// certPodSpec is the part of the controller's pod spec that mounts the
// certificate.
type certPodSpec struct {
	Template struct {
		Spec struct {
			SecurityContext struct {
				FSGroup *int64 `json:"fsGroup"`
			} `json:"securityContext"`
			Containers []struct {
				Args         []string      `json:"args"`
				VolumeMounts []volumeMount `json:"volumeMounts"`
			} `json:"containers"`
			Volumes []struct {
				Name   string `json:"name"`
				Secret *struct {
					SecretName  string `json:"secretName"`
					DefaultMode *int   `json:"defaultMode"`
					Items       []struct {
						Key  string `json:"key"`
						Path string `json:"path"`
					} `json:"items"`
				} `json:"secret"`
			} `json:"volumes"`
		} `json:"spec"`
	} `json:"template"`
}

type volumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly"`
}

// flagValue is the value of flag in args, or def when args do not set it.
// A flag set twice fails the test: which one counts would be a guess.
func flagValue(t *testing.T, args []string, flag, def string) string {
	t.Helper()
	var values []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			values = append(values, v)
		}
	}
	switch len(values) {
	case 0:
		return def
	case 1:
		return values[0]
	}
	t.Fatalf("the controller's args %v set %s %d times", args, flag, len(values))
	return ""
}

// checkServingCertMount checks that the controller serves metrics from the
// serving certificate's Secret: --metrics-cert-path is where the Secret is
// mounted read-only, the Secret's tls.crt and tls.key (what cert-manager
// writes) appear under the file names the controller reads, and the files
// are readable by the controller and no other user. It returns the serving
// Certificate's spec.
func checkServingCertMount(t *testing.T, objs []object) certificateSpec {
	t.Helper()
	var cs certificateSpec
	spec(t, find(t, objs, "Certificate", servingCertificate), &cs)
	var ds certPodSpec
	spec(t, find(t, objs, "Deployment", "deployobject-controller"), &ds)
	pod := ds.Template.Spec
	if len(pod.Containers) == 0 {
		t.Fatal("the Deployment has no container")
	}
	c := pod.Containers[0]
	if !slices.Contains(c.Args, "--metrics-secure=true") {
		t.Errorf("the controller's args %v lack --metrics-secure=true, which --metrics-cert-path needs", c.Args)
	}
	dir := flagValue(t, c.Args, "--metrics-cert-path", "")
	if dir == "" {
		t.Fatalf("the controller's args %v do not set --metrics-cert-path", c.Args)
	}
	// The controller's defaults (pkg/options).
	certName := flagValue(t, c.Args, "--metrics-cert-name", "tls.crt")
	keyName := flagValue(t, c.Args, "--metrics-cert-key", "tls.key")

	i := slices.IndexFunc(c.VolumeMounts, func(m volumeMount) bool { return m.MountPath == dir })
	if i < 0 {
		t.Fatalf("nothing is mounted at --metrics-cert-path %s: %+v", dir, c.VolumeMounts)
	}
	mount := c.VolumeMounts[i]
	if !mount.ReadOnly {
		t.Errorf("the certificate is mounted writable at %s", dir)
	}
	var found bool
	for _, v := range pod.Volumes {
		if v.Name != mount.Name {
			continue
		}
		found = true
		if v.Secret == nil {
			t.Fatalf("volume %s is not a Secret volume", v.Name)
		}
		if v.Secret.SecretName != cs.SecretName {
			t.Errorf("volume %s mounts Secret %s, the Certificate writes %s", v.Name, v.Secret.SecretName, cs.SecretName)
		}
		files := map[string]string{}
		for _, it := range v.Secret.Items {
			files[it.Key] = it.Path
		}
		if want := map[string]string{"tls.crt": certName, "tls.key": keyName}; !maps.Equal(files, want) {
			t.Errorf("volume %s maps the Secret's keys to files %v, want %v", v.Name, files, want)
		}
		// The kubelet makes a Secret volume's files root's, of group
		// fsGroup when it is set, which the controller's process is in.
		if v.Secret.DefaultMode == nil {
			t.Fatalf("volume %s sets no defaultMode: its files would be 0644, readable by every user", v.Name)
		}
		if pod.SecurityContext.FSGroup == nil {
			t.Fatalf("the pod sets no fsGroup: the files of volume %s would belong to root and its group, which the controller is not in", v.Name)
		}
		if mode := *v.Secret.DefaultMode; mode&0o040 == 0 || mode&0o007 != 0 {
			t.Errorf("volume %s: defaultMode %#o, want the group (fsGroup %d) to read and others nothing", v.Name, mode, *pod.SecurityContext.FSGroup)
		}
	}
	if !found {
		t.Fatalf("the pod has no volume %s", mount.Name)
	}
	return cs
}

func duration(t *testing.T, what, d string) time.Duration {
	t.Helper()
	v, err := time.ParseDuration(d)
	if err != nil || v <= 0 {
		t.Fatalf("%s %q is no positive duration", what, d)
	}
	return v
}

// checkOwnCA checks the component's own CA: the serving certificate is
// signed by a CA Issuer whose CA certificate a self-signed Issuer issues,
// and the CA is renewed early enough for every serving certificate it
// signed to be replaced while the CA certificate that signed it is still
// valid (cert-manager signs serving certificates that outlive their CA).
func checkOwnCA(t *testing.T, objs []object, serving certificateSpec) {
	t.Helper()
	if serving.IssuerRef.Kind != "Issuer" || serving.IssuerRef.Group != "cert-manager.io" {
		t.Fatalf("the serving certificate's issuerRef %+v is not an Issuer of cert-manager.io", serving.IssuerRef)
	}
	var ca issuerSpec
	spec(t, find(t, objs, "Issuer", serving.IssuerRef.Name), &ca)
	if ca.CA == nil {
		t.Fatalf("Issuer %s is no CA Issuer", serving.IssuerRef.Name)
	}
	var caCert certificateSpec
	var caCertName string
	for _, o := range objs {
		if o.Kind != "Certificate" {
			continue
		}
		var cs certificateSpec
		spec(t, o, &cs)
		if cs.SecretName == ca.CA.SecretName {
			caCert, caCertName = cs, o.Metadata.Name
		}
	}
	if caCertName == "" {
		t.Fatalf("no Certificate writes the CA Issuer's Secret %s", ca.CA.SecretName)
	}
	if !caCert.IsCA {
		t.Errorf("Certificate %s is not a CA", caCertName)
	}
	var root issuerSpec
	spec(t, find(t, objs, "Issuer", caCert.IssuerRef.Name), &root)
	if caCert.IssuerRef.Kind != "Issuer" || root.SelfSigned == nil {
		t.Errorf("Certificate %s is issued by %+v, want the component's self-signed Issuer", caCertName, caCert.IssuerRef)
	}

	servingFor := duration(t, "the serving certificate's duration", serving.Duration)
	caFor := duration(t, "the CA's duration", caCert.Duration)
	caRenew := duration(t, "the CA's renewBefore", caCert.RenewBefore)
	if caRenew >= caFor {
		t.Errorf("the CA's renewBefore %s is not below its duration %s", caCert.RenewBefore, caCert.Duration)
	}
	if caRenew < servingFor {
		t.Errorf("the CA is renewed %s before it expires, less than a serving certificate's %s: one it signed could outlive it", caCert.RenewBefore, serving.Duration)
	}
	// The scraper's ca.crt and the controller's certificate come from
	// one Secret, each read when its pod's kubelet updates it: with the
	// same key, the old and the new CA certificate verify the same
	// serving certificates.
	if caCert.PrivateKey.RotationPolicy != "Never" {
		t.Errorf("the CA's rotationPolicy %q: a renewed CA with a new key would fail scrapes until both pods see the new Secret", caCert.PrivateKey.RotationPolicy)
	}
	for _, o := range objs {
		if o.Kind == "Issuer" || o.Kind == "Certificate" {
			if o.Metadata.Labels["app.kubernetes.io/name"] != jobName {
				t.Errorf("%s %s lacks the label app.kubernetes.io/name: %s", o.Kind, o.Metadata.Name, jobName)
			}
		}
	}
}

// checkServingCert checks the serving certificate: it names the metrics
// Service, serves TLS, and gets a new key at every renewal, well before it
// expires.
func checkServingCert(t *testing.T, cs certificateSpec) {
	t.Helper()
	if !slices.Contains(cs.DNSNames, metricsService) {
		t.Errorf("the serving certificate's dnsNames %v lack the metrics Service's name %s", cs.DNSNames, metricsService)
	}
	if !slices.Contains(cs.Usages, "server auth") {
		t.Errorf("the serving certificate's usages %v lack server auth", cs.Usages)
	}
	if cs.PrivateKey.RotationPolicy != "Always" {
		t.Errorf("the serving certificate's rotationPolicy %q, want Always: a new key at every renewal", cs.PrivateKey.RotationPolicy)
	}
	if cs.PrivateKey.Algorithm != "ECDSA" || cs.PrivateKey.Size != 256 {
		t.Errorf("the serving certificate's key %s %d, want ECDSA 256 (P-256)", cs.PrivateKey.Algorithm, cs.PrivateKey.Size)
	}
	if renew, d := duration(t, "renewBefore", cs.RenewBefore), duration(t, "duration", cs.Duration); renew >= d {
		t.Errorf("the serving certificate's renewBefore %s is not below its duration %s", cs.RenewBefore, cs.Duration)
	}
}

// TestMetricsCertManager builds the metrics-cert-manager component on top
// of deploy/ and deploy/namespaced, alone and with the monitoring component
// (before and after it), and checks the chain from the self-signed Issuer
// to the files the controller reads.
func TestMetricsCertManager(t *testing.T) {
	for _, base := range []string{"../../deploy", "../../deploy/namespaced"} {
		for _, components := range [][]string{{certComponent}, {component, certComponent}, {certComponent, component}} {
			var names []string
			for _, c := range components {
				names = append(names, filepath.Base(c))
			}
			t.Run(filepath.Base(base)+" "+strings.Join(names, " "), func(t *testing.T) {
				const ns = "metrics-cert-test"
				objs := build(t, base, ns, components...)
				cs := checkServingCertMount(t, objs)
				checkServingCert(t, cs)
				checkOwnCA(t, objs, cs)
				for _, o := range objs {
					if (o.Kind == "Issuer" || o.Kind == "Certificate") && o.Metadata.Namespace != ns {
						t.Errorf("%s %s is in namespace %q, want the kustomization's %s", o.Kind, o.Metadata.Name, o.Metadata.Namespace, ns)
					}
				}
				if slices.Contains(components, component) {
					find(t, objs, "Service", metricsService)
				}
			})
		}
	}
}

type tlsConfig struct {
	ServerName         string `json:"serverName"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify"`
	CA                 struct {
		Secret *struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"secret"`
	} `json:"ca"`
}

// TestMetricsCertDocs builds the kustomizations of "Metrics certificate
// from cert-manager" in docs/operating.md as they stand there. With the
// monitoring component, the ServiceMonitor must verify the certificate:
// trust ca.crt of the Secret the controller serves from and expect a name
// the certificate carries. With an issuer of one's own, the Certificate
// must name it and nothing of the component's own CA may remain.
func TestMetricsCertDocs(t *testing.T) {
	raw, err := os.ReadFile("../../" + operatingPage)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	t.Run("verified by the ServiceMonitor", func(t *testing.T) {
		k := docBlock(t, operatingPage, doc, "# kustomization.yaml: the metrics certificate, verified by the monitoring component's ServiceMonitor")
		objs := kustomize(t, docDir(t, map[string]string{"kustomization.yaml": k}))
		cs := checkServingCertMount(t, objs)
		checkServingCert(t, cs)
		checkOwnCA(t, objs, cs)
		var sms struct {
			Endpoints []struct {
				TLSConfig tlsConfig `json:"tlsConfig"`
			} `json:"endpoints"`
		}
		spec(t, find(t, objs, "ServiceMonitor", "deployobject-controller"), &sms)
		if len(sms.Endpoints) != 1 {
			t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(sms.Endpoints))
		}
		tc := sms.Endpoints[0].TLSConfig
		if tc.InsecureSkipVerify {
			t.Error("the ServiceMonitor still skips verification")
		}
		if tc.CA.Secret == nil || tc.CA.Secret.Name != cs.SecretName || tc.CA.Secret.Key != "ca.crt" {
			t.Errorf("the ServiceMonitor trusts %+v, want ca.crt of Secret %s", tc.CA.Secret, cs.SecretName)
		}
		if !slices.Contains(cs.DNSNames, tc.ServerName) {
			t.Errorf("the ServiceMonitor expects the name %q, the certificate carries %v", tc.ServerName, cs.DNSNames)
		}
	})
	t.Run("your own issuer", func(t *testing.T) {
		k := docBlock(t, operatingPage, doc, "# kustomization.yaml: the metrics certificate from your own issuer")
		objs := kustomize(t, docDir(t, map[string]string{"kustomization.yaml": k}))
		cs := checkServingCertMount(t, objs)
		checkServingCert(t, cs)
		if cs.IssuerRef.Kind != "ClusterIssuer" || cs.IssuerRef.Name == "" || cs.IssuerRef.Group != "cert-manager.io" {
			t.Errorf("the serving certificate's issuerRef %+v, want the ClusterIssuer of the example", cs.IssuerRef)
		}
		for _, o := range objs {
			if o.Kind == "Issuer" || (o.Kind == "Certificate" && o.Metadata.Name != servingCertificate) {
				t.Errorf("%s %s of the component's own CA remains", o.Kind, o.Metadata.Name)
			}
		}
	})
}
