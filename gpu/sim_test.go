package gpu

import (
	"reflect"
	"testing"
)

func TestParseSimSpec(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    []uint64
		wantErr bool
	}{
		{spec: "2x16GiB", want: []uint64{16 << 30, 16 << 30}},
		{spec: "16GiB", want: []uint64{16 << 30}},
		{spec: "1x80GB, 2X24gib", want: []uint64{80e9, 24 << 30, 24 << 30}},
		{spec: "3x1.5GiB", want: []uint64{3 << 29, 3 << 29, 3 << 29}},
		{spec: "", wantErr: true},
		{spec: "2x", wantErr: true},
		{spec: "0x16GiB", wantErr: true},
		{spec: "2x16XB", wantErr: true},
		{spec: "2x512MiB", wantErr: true},
		{spec: "ax16GiB", wantErr: true},
		{spec: "2x16GiB,", wantErr: true},
	} {
		cfgs, err := ParseSimSpec(tc.spec)
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseSimSpec(%q) = %v, want an error", tc.spec, cfgs)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSimSpec(%q): %v", tc.spec, err)
			continue
		}
		var got []uint64
		for i, c := range cfgs {
			got = append(got, c.TotalMem)
			if c.Ordinal != i || c.PinnedBandwidth <= 0 {
				t.Errorf("ParseSimSpec(%q)[%d] = %+v", tc.spec, i, c)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSimSpec(%q) sizes = %v, want %v", tc.spec, got, tc.want)
		}
	}
	devs, err := NewSimDevices("2x16GiB")
	if err != nil || len(devs) != 2 || devs[1].Info().Ordinal != 1 || devs[0].Info().TotalMem != 16<<30 {
		t.Fatalf("NewSimDevices: %v %v", devs, err)
	}
}

func TestSimDeviceMemory(t *testing.T) {
	d := NewSimDevice(SimConfig{TotalMem: 100 << 20, OthersMem: 20 << 20})
	if free, total, _ := d.MemInfo(); free != 80<<20 || total != 100<<20 {
		t.Fatalf("MemInfo = %d, %d", free, total)
	}
	p, err := d.Alloc(1) // booked as one 2 MiB page
	if err != nil {
		t.Fatal(err)
	}
	if free, _, _ := d.MemInfo(); free != 78<<20 {
		t.Fatalf("free after 1-byte alloc = %d, want 78 MiB", free)
	}
	if _, err := d.Alloc(79 << 20); !IsOutOfMemory(err) {
		t.Fatalf("over-capacity alloc: %v, want out-of-memory", err)
	}
	d.InjectAllocFailures(1)
	if _, err := d.Alloc(1 << 20); !IsOutOfMemory(err) {
		t.Fatalf("injected failure: %v", err)
	}
	q, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatalf("alloc after the injected failure: %v", err)
	}
	if err := d.Free(q + 1); err == nil {
		t.Fatal("freeing an interior pointer succeeded")
	}
	for _, x := range []DevicePtr{p, q} {
		if err := d.Free(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Free(p); err == nil {
		t.Fatal("double free succeeded")
	}
	st := d.Stats()
	if st.Allocated != 0 || st.FailedAllocs != 2 || st.Injected != 1 || st.PeakAllocated != 4<<20 {
		t.Fatalf("stats = %+v", st)
	}
	d.SetOthers(99 << 20)
	if free, _, _ := d.MemInfo(); free != 1<<20 {
		t.Fatalf("free after SetOthers = %d", free)
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"512MiB", 512 << 20, true}, {"2G", 2 << 30, true}, {"1000", 1000, true},
		{"1.5KB", 1500, true}, {"GiB", 0, false}, {"-1GiB", 0, false}, {"1PiB", 0, false},
	} {
		got, err := ParseBytes(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v", tc.in, got, err)
		}
	}
}
