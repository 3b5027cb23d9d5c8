package snarkpack

import (
	"bufio"
	"io"
)

func bufferedReader(r io.Reader) io.Reader { return bufio.NewReaderSize(r, 1<<20) }
