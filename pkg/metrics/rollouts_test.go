package metrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/tools/cache"

	"deployobject.dev/controller/pkg/configrollout"
)

func TestRolloutCollector(t *testing.T) {
	l := configrollout.NewLimiter(1, time.Minute, func(cache.ObjectName) {})
	for i := range 3 {
		l.Acquire(cache.ObjectName{Namespace: "apps", Name: fmt.Sprintf("app-%d", i)})
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewRolloutCollector(l))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "deployobject_config_rollouts" || f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("unexpected metric %s of type %s", f.GetName(), f.GetType())
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	if got["active"] != 1 || got["pending"] != 2 || len(got) != 2 {
		t.Errorf("gauge = %v, want active 1, pending 2", got)
	}
}
