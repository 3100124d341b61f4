package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/limitsim/limitsim/report"
	"github.com/limitsim/limitsim/sim/client"
)

// progress reports how far a long command has come on stderr: points
// done, their rate and the time left. Nothing is printed for work under a
// second. On a terminal a progress bar (schollz/progressbar) is redrawn
// every second; otherwise a plain line is written every five seconds, for
// logs.
type progress struct {
	w     io.Writer
	what  string
	total int64
	done  atomic.Int64
	bar   *progressbar.ProgressBar // on a terminal; drawn by the reporting goroutine only
	// amount formats done of total ("3 of 10 done" when nil).
	amount func(done, total int64) string
	// clock, for a run, is the simulated instant: once done reaches total
	// the report says the last requests are finishing and how far the
	// simulated clock has gone, instead of a time left it cannot know.
	clock *atomic.Int64
	last  string // who the last requests are: "the last replication's", with several
	stop  chan struct{}
	wg    sync.WaitGroup
}

// startProgress begins reporting total units of work called what.
func startProgress(w io.Writer, what string, total int) *progress {
	return startProgressOf(w, what, int64(total), nil)
}

// startProgressOf begins reporting total units of work called what, each
// report's amount formatted by amount (nil: "3 of 10 done").
func startProgressOf(w io.Writer, what string, total int64, amount func(done, total int64) string) *progress {
	p := &progress{w: w, what: what, total: total, amount: amount, stop: make(chan struct{})}
	term := isTerminal(w)
	every := 5 * time.Second
	if term {
		every = time.Second
		p.bar = newBar(w, total)
	}
	start := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		printed := false
		for {
			select {
			case <-p.stop:
				if printed && p.bar != nil {
					p.bar.Clear() //nolint:errcheck // stderr: nothing to do about it
				}
				return
			case <-tick.C:
				p.print(time.Since(start), term)
				printed = true
			}
		}
	}()
	return p
}

// newBar is the terminal's progress bar for total units: the percentage
// and the bar, then the progress line (which carries the rate and the time
// left); cleared at the end.
func newBar(w io.Writer, total int64) *progressbar.ProgressBar {
	return progressbar.NewOptions64(max(1, total), progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(24),
		progressbar.OptionSetPredictTime(false), progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionClearOnFinish(), progressbar.OptionSetRenderBlankState(false), progressbar.OptionThrottle(0))
}

// step counts one unit done.
func (p *progress) step() { p.done.Add(1) }

// finish stops reporting.
func (p *progress) finish() {
	close(p.stop)
	p.wg.Wait()
}

func (p *progress) print(elapsed time.Duration, term bool) {
	done := p.done.Load()
	rate := float64(done) / elapsed.Seconds()
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(p.total-done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	line := fmt.Sprintf("%s: %d of %d done, %.3g/s, about %s left", p.what, done, p.total, rate, eta)
	if p.amount != nil {
		line = fmt.Sprintf("%s: %s, about %s left", p.what, p.amount(done, p.total), eta)
		if p.clock != nil && done >= p.total {
			line = fmt.Sprintf("%s: %s; %s last requests are finishing, simulated clock at %v", p.what, p.amount(done, p.total), p.last,
				time.Duration(p.clock.Load()).Round(time.Second))
		}
	}
	if term && p.bar != nil {
		p.bar.Describe(line)
		p.bar.Set64(min(done, p.total)) //nolint:errcheck // stderr: nothing to do about it
		return
	}
	fmt.Fprintln(p.w, line)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// startRunProgress reports a run's progress: simulated time against the
// run's duration, or requests arrived against run.requests.
func startRunProgress(w io.Writer, cfg *client.Config) *progress {
	amount := func(done, total int64) string {
		return fmt.Sprintf("%s of %s requests arrived", report.Grouped(done), report.Grouped(total))
	}
	if cfg.Run.Duration > 0 {
		amount = func(done, total int64) string {
			return fmt.Sprintf("simulated %v of %v", time.Duration(done).Round(time.Second), time.Duration(total).Round(time.Second))
		}
	}
	p := startProgressOf(w, "run", client.ProgressTotal(cfg), amount)
	p.clock, p.last = new(atomic.Int64), "the"
	if cfg.Run.Replications > 1 { // the amount sums them; the clock is the running one's
		p.last = "the last replication's"
	}
	return p
}
