package itests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeFamilies reads url (a /metrics endpoint) with Prometheus's own text parser.
func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return fams
}

// scrape returns the counters and gauges of url by `name{a="x",b="y"}` (labels sorted by name,
// as the exposition writes them; no braces without labels) and histograms by the same key with
// their sample count.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for name, f := range scrapeFamilies(t, url) {
		for _, m := range f.GetMetric() {
			key := name
			if ls := m.GetLabel(); len(ls) > 0 {
				parts := make([]string, 0, len(ls))
				for _, l := range ls {
					parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
				sort.Strings(parts)
				key += "{" + strings.Join(parts, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.Histogram.GetSampleCount())
			case m.Untyped != nil:
				out[key] = m.Untyped.GetValue()
			}
		}
	}
	return out
}

// histogram returns the sample of family f whose labels include every name=value of want.
func histogram(f *dto.MetricFamily, want map[string]string) *dto.Histogram {
	for _, m := range f.GetMetric() {
		n := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				n++
			}
		}
		if n == len(want) && m.Histogram != nil {
			return m.Histogram
		}
	}
	return nil
}

// checkHistogram asserts that h holds at least min samples, spread over its buckets as a
// Prometheus histogram is (cumulative, the last finite bucket at most the count, some finite
// bucket populated: every observation here is far below the largest bound).
func checkHistogram(t *testing.T, what string, h *dto.Histogram, min uint64) {
	t.Helper()
	if h == nil {
		t.Errorf("%s: no histogram", what)
		return
	}
	if h.GetSampleCount() < min {
		t.Errorf("%s: %d samples, want at least %d", what, h.GetSampleCount(), min)
	}
	var prev uint64
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
			t.Errorf("%s: bucket le=%g holds %d after %d (count %d)", what, b.GetUpperBound(), b.GetCumulativeCount(), prev, h.GetSampleCount())
		}
		prev = b.GetCumulativeCount()
	}
	if prev != h.GetSampleCount() || prev == 0 {
		t.Errorf("%s: largest finite bucket holds %d of %d samples", what, prev, h.GetSampleCount())
	}
	if h.GetSampleSum() <= 0 {
		t.Errorf("%s: sum %g", what, h.GetSampleSum())
	}
}

// dashboardPath is the Grafana dashboard the docs ship, from this package's directory.
const dashboardPath = "../docs/grafana/snarkd.json"

// eventFamilies appear on /metrics only once what they count has happened.
var eventFamilies = map[string]bool{
	"snarkd_gpu_alloc_failed_total": true, // an out-of-memory error admission did not predict
	"snarkd_params_bytes":           true, // Filecoin parameters loaded
}

// checkDashboard asserts that every series the Grafana dashboard queries is one the daemon
// serves (fams: a scrape after a GPU run), so a renamed metric cannot leave a panel empty.
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatalf("reading the dashboard: %v", err)
	}
	var dash struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil || len(dash.Panels) == 0 {
		t.Fatalf("%s: %d panels, %v", dashboardPath, len(dash.Panels), err)
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:snarkd|go|process)_[a-z0-9_]+`).FindAllString(string(raw), -1) {
		used[m] = true
	}
	if len(used) < 20 {
		t.Fatalf("the dashboard queries %d series", len(used))
	}
	for name := range used {
		family := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && fams[base] != nil && fams[base].GetType() == dto.MetricType_HISTOGRAM {
				family = base
			}
		}
		if fams[family] == nil && !eventFamilies[family] {
			t.Errorf("the dashboard queries %s, which /metrics does not serve", name)
		}
	}
}
