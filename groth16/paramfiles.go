package groth16

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/snarkd/snarkd/internal/atomicfile"
)

// WriteParamFiles writes pk as base.params and its verifying key as base.vk in dir, with
// base.meta holding sectorSize as the published .meta files of a Filecoin parameter directory
// do. Each file goes through a temporary name renamed into place, so a reader never sees a
// partial file.
func WriteParamFiles(dir, base string, sectorSize uint64, pk *Parameters) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, fill func(w io.Writer) error) error {
		return atomicfile.Write(filepath.Join(dir, name), 0o644, fill)
	}
	if err := write(base+".params", func(w io.Writer) error { _, err := pk.WriteTo(w); return err }); err != nil {
		return err
	}
	if err := write(base+".vk", func(w io.Writer) error { _, err := pk.VK.WriteTo(w); return err }); err != nil {
		return err
	}
	return write(base+".meta", func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "{\n  \"sector_size\": %d\n}", sectorSize)
		return err
	})
}
