package groth16

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// WriteParamFiles writes pk as base.params and its verifying key as base.vk in dir, with
// base.meta holding sectorSize as the published .meta files of a Filecoin parameter directory
// do. Each file goes through a temporary name renamed into place, so a reader never sees a
// partial file.
func WriteParamFiles(dir, base string, sectorSize uint64, pk *Parameters) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, fill func(w *bufio.Writer) error) error {
		final := filepath.Join(dir, name)
		tmp := final + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		err = fill(w)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return fmt.Errorf("writing %s: %w", final, err)
		}
		if err := f.Close(); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("writing %s: %w", final, err)
		}
		if err := os.Rename(tmp, final); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("writing %s: %w", final, err)
		}
		return nil
	}
	if err := write(base+".params", func(w *bufio.Writer) error { _, err := pk.WriteTo(w); return err }); err != nil {
		return err
	}
	if err := write(base+".vk", func(w *bufio.Writer) error { _, err := pk.VK.WriteTo(w); return err }); err != nil {
		return err
	}
	return write(base+".meta", func(w *bufio.Writer) error {
		_, err := fmt.Fprintf(w, "{\n  \"sector_size\": %d\n}", sectorSize)
		return err
	})
}
