package plugin

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scraped is a /metrics text parsed by Prometheus's own text parser.
type scraped map[string]*dto.MetricFamily

func parseMetrics(t *testing.T, text []byte) scraped {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, text)
	}
	return fams
}

// labelsOf renders a sample's labels as `a="x",b="y"`, sorted by name.
func labelsOf(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+`"`+l.GetValue()+`"`)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// value returns the value of family name's sample whose labels include every one of want
// (`device="1"`, …), and whether there is one.
func (s scraped) value(name string, want ...string) (float64, bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		ls := "," + labelsOf(m) + ","
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(ls, ","+w+",")
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}
