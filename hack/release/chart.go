package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// chartDir is the chart, in the repository.
const chartDir = "charts/deployobject-controller"

// releaseName is the name docs/installing.md gives the release. The
// chart's object names do not depend on it.
const releaseName = "deployobject-controller"

// renderChart renders ch as `helm template` does, into namespace with vals,
// and returns its objects; with crds, the CRD too (--include-crds), as
// `helm install` installs it unless told --skip-crds.
func renderChart(ch *chart.Chart, namespace string, vals map[string]any, crds bool) ([]object, error) {
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.Replace = true
	install.IncludeCRDs = crds
	r, err := install.Run(ch, vals)
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a release of type %T", r)
	}
	if len(rel.Hooks) > 0 {
		return nil, fmt.Errorf("the chart renders %d hooks: `helm template | kubectl apply` would install them with the rest", len(rel.Hooks))
	}
	return decodeObjects([]byte(rel.Manifest))
}

// chartVersion is the chart version of the project's VERSION (git
// describe): a tag v1.2.3, with or without what describe adds to it, is
// 1.2.3...; a commit without a tag before it is 0.0.0-git-COMMIT, a
// prerelease below every release.
func chartVersion(version string) (string, error) {
	v := strings.TrimPrefix(version, "v")
	if _, err := semver.StrictNewVersion(v); err == nil {
		return v, nil
	}
	v = "0.0.0-git-" + version
	if _, err := semver.StrictNewVersion(v); err != nil {
		return "", fmt.Errorf("VERSION %q makes no chart version: %w", version, err)
	}
	return v, nil
}

// packageChart writes the chart into out as a package of the release:
// version and appVersion from version, and image's repository, tag and
// digest as the image values' defaults, so that the package installs the
// image install.yaml names. It returns the package's path.
func packageChart(root, out, image, version string) (string, error) {
	ch, err := loader.Load(filepath.Join(root, chartDir))
	if err != nil {
		return "", err
	}
	if ch.Metadata.Version, err = chartVersion(version); err != nil {
		return "", err
	}
	ch.Metadata.AppVersion = version
	ref, err := parseImage(image)
	if err != nil {
		return "", err
	}
	set := map[string]string{"repository": ref.repository, "tag": ref.tag, "digest": ref.digest}
	found := false
	for _, f := range ch.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		found = true
		if f.Data, err = setImageValues(f.Data, set); err != nil {
			return "", err
		}
		if ch.Values, err = common.ReadValues(f.Data); err != nil {
			return "", err
		}
	}
	if !found {
		return "", fmt.Errorf("%s has no %s", chartDir, chartutil.ValuesfileName)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(ch, out)
}

// setImageValues sets the keys of image: in a values.yaml, each in place on
// its own line, so that the rest of the file, comments and blank lines
// included, stays as it is.
func setImageValues(data []byte, set map[string]string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("values.yaml is not one YAML document")
	}
	image := mappingValue(doc.Content[0], "image")
	if image == nil || image.Kind != yaml.MappingNode {
		return nil, errors.New("values.yaml has no image mapping")
	}
	lines := strings.SplitAfter(string(data), "\n")
	for key, value := range set {
		n := mappingValue(image, key)
		if n == nil || n.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("values.yaml has no image.%s", key)
		}
		// The value as written: plain, or double-quoted without escapes.
		written := n.Value
		if n.Style == yaml.DoubleQuotedStyle {
			written = `"` + n.Value + `"`
		} else if n.Style != 0 {
			return nil, fmt.Errorf("values.yaml: image.%s is neither plain nor double-quoted", key)
		}
		line, col := n.Line-1, n.Column-1
		if line >= len(lines) || !strings.HasPrefix(lines[line][col:], written) {
			return nil, fmt.Errorf("values.yaml: image.%s is not where the parser says (line %d)", key, n.Line)
		}
		lines[line] = lines[line][:col] + strconv.Quote(value) + lines[line][col+len(written):]
	}
	return []byte(strings.Join(lines, "")), nil
}

// mappingValue is the value of key in the mapping node m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
