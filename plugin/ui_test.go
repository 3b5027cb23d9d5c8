package plugin

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestVRAMSegments: a GPU's bar segments are the admission books in order and always add up to
// the device's memory, even when a sample is stale (others plus reservations above the total)
// or a resident vector is listed while its reservation is being released.
func TestVRAMSegments(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name     string
		dev      rpcapi.DeviceStatus
		resident []gpu.ResidentStat
		want     []uint64 // others, headroom, plans, srs, tables, free
	}{
		{"idle", rpcapi.DeviceStatus{VRAMTotal: 16 * gib, VRAMHeadroom: gib / 2}, nil,
			[]uint64{0, gib / 2, 0, 0, 0, 15*gib + gib/2}},
		{"plans and resident vectors", rpcapi.DeviceStatus{VRAMTotal: 80 * gib, VRAMOthers: gib, VRAMHeadroom: gib / 2,
			VRAMReserved: 40 * gib, ResidentBytes: 10 * gib},
			[]gpu.ResidentStat{{Key: "srs/1/a", Bytes: 8 * gib}, {Key: "ntt/27", Bytes: gib}, {Key: "r1cs/porep-32GiB", Bytes: gib}},
			[]uint64{gib, gib / 2, 30 * gib, 8 * gib, 2 * gib, 80*gib - gib - gib/2 - 40*gib}},
		{"resident listed, reservation released", rpcapi.DeviceStatus{VRAMTotal: 16 * gib, VRAMHeadroom: gib / 2,
			VRAMReserved: 2 * gib, ResidentBytes: gib},
			[]gpu.ResidentStat{{Key: "srs/1/a", Bytes: 3 * gib}, {Key: "ntt/20", Bytes: gib}},
			[]uint64{0, gib / 2, gib, gib, 0, 16*gib - gib/2 - 2*gib}},
		{"stale sample above the total", rpcapi.DeviceStatus{VRAMTotal: 16 * gib, VRAMOthers: 12 * gib, VRAMHeadroom: gib / 2,
			VRAMReserved: 8 * gib}, nil,
			[]uint64{12 * gib, gib / 2, 3*gib + gib/2, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			segs := vramSegments(tc.dev, tc.resident)
			names := []string{"others", "headroom", "plans", "srs", "tables", "free"}
			if len(segs) != len(names) {
				t.Fatalf("segments %+v", segs)
			}
			var sum uint64
			for i, s := range segs {
				if s.Name != names[i] || s.Bytes != tc.want[i] {
					t.Errorf("segment %d = %s %d, want %s %d", i, s.Name, s.Bytes, names[i], tc.want[i])
				}
				sum += s.Bytes
			}
			if sum != tc.dev.VRAMTotal {
				t.Errorf("segments add up to %d, want %d", sum, tc.dev.VRAMTotal)
			}
		})
	}
}

// TestStatusPageServed: /ui is one self-contained page (no asset from elsewhere, so it works on
// an offline host, and a Content-Security-Policy that lets it call only this daemon), and
// /ui/data.json describes the devices, queues and recent jobs it draws.
func TestStatusPageServed(t *testing.T) {
	base, _ := openDaemon(t, config.Default())
	resp, err := http.Get(base + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /ui: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !regexp.MustCompile(`default-src 'none'.*connect-src 'self'`).MatchString(csp) {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?[a-z]+:|@import|url\(\s*["']?https?:`).Find(page); m != nil {
		t.Errorf("the page loads an asset from elsewhere: %q", m)
	}

	resp, err = http.Get(base + "/ui/data.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data uiData
	if err := json.NewDecoder(resp.Body).Decode(&data); err != nil {
		t.Fatalf("decoding /ui/data.json: %v", err)
	}
	if data.Backend != "cpu" || len(data.Devices) != 1 || data.Devices[0].GPU || len(data.Queues) != len(rpcapi.Kinds) ||
		data.Now.IsZero() || len(data.Jobs) != 0 {
		t.Errorf("/ui/data.json of an idle CPU daemon: %+v", data)
	}
	if n := len(data.Devices[0].Workers); n == 0 {
		t.Errorf("CPU device lists no workers: %+v", data.Devices[0])
	}
}
