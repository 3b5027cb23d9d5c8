package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
)

// progressLogEvery is how often a long command writes a progress line when stderr is not a
// terminal: often enough that a log shows the command is alive, rarely enough to stay readable.
const progressLogEvery = 30 * time.Second

// progressBarWidth is the width of the bars drawn on a terminal.
const progressBarWidth = 30

// progressOut shows a long command's progress on stderr. On a terminal (or with --progress) it
// redraws one line in place; otherwise, for logs, it writes a line whenever the step changes
// and every progressLogEvery within a step. params fetch, params gen and circuit info share it,
// so all long commands look and log alike.
type progressOut struct {
	w        io.Writer
	draw     bool
	logEvery time.Duration

	mu      sync.Mutex
	lastLog time.Time
	lastKey string
	width   int // the longest line drawn, so a shorter one erases it
	drawn   bool
	// closed is set by close: nothing is shown after it.
	closed bool
}

// newProgressOut draws when --progress is set or stderr is a terminal and --json is not set.
func newProgressOut(c *cli.Context) *progressOut {
	return &progressOut{w: c.App.ErrWriter, draw: c.Bool("progress") || (!c.Bool("json") && isTerminal(c.App.ErrWriter)),
		logEvery: progressLogEvery, lastLog: time.Now()}
}

// show reports line, which belongs to step key. fraction in [0, 1] draws a bar; a negative one
// (work that cannot be counted) draws none.
func (p *progressOut) show(key string, fraction float64, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.draw {
		if fraction >= 0 {
			fill := int(min(fraction, 1) * progressBarWidth)
			line = "[" + strings.Repeat("#", fill) + strings.Repeat(".", progressBarWidth-fill) + "] " + line
		}
		p.width = max(p.width, len([]rune(line)))
		fmt.Fprintf(p.w, "\r%-*s", p.width, line)
		p.drawn = true
		return
	}
	if key != p.lastKey || time.Since(p.lastLog) >= p.logEvery {
		p.lastKey, p.lastLog = key, time.Now()
		fmt.Fprintln(p.w, line)
	}
}

// every calls f now, then every d until the returned stop is called, which calls f a last
// time and ends a drawn line.
func (p *progressOut) every(d time.Duration, f func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		f()
		for {
			select {
			case <-t.C:
				f()
			case <-quit:
				f()
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
			p.close()
		})
	}
}

// end finishes a drawn line, so that what follows starts on a line of its own.
func (p *progressOut) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn, p.width = false, 0
	}
}

// close ends a drawn line and drops what is shown after it: work that outlives the command
// (a setup left running after an interrupt, an event stream) must not write after its last line.
func (p *progressOut) close() {
	p.end()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// fmtCount writes n with thousands separators (3,400,000), as progress lines count points and rows.
func fmtCount(n int64) string {
	if n < 0 {
		return "-" + fmtCount(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtElapsed rounds a duration for progress lines: tenths of a second under a minute, seconds above.
func fmtElapsed(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
