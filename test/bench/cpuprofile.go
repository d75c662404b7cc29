package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// cpuSegment is how long each CPU profile of a controller runs. The
// profile endpoint profiles for a time fixed by its request and a request
// cancelled early loses its profile, so a run is covered by consecutive
// profiles and the last one goes on past the end by up to this much. Each
// profile costs the controller the encoding of its samples, which counts
// in its measured CPU: longer profiles cost less.
const cpuSegment = 10 * time.Second

// cpuProfiler keeps consecutive CPU profiles of a controller, from the
// moment its metrics server answers until finish, as
// cpu-<label>-NN.pprof in a directory; `go tool pprof` merges them. It
// only logs what goes wrong: a profile is an aid to reading the figures,
// not one of them.
type cpuProfiler struct {
	ctrl  *controller
	dir   string
	logf  func(format string, args ...any)
	stop  chan struct{}
	once  sync.Once
	done  chan struct{}
	files []string
}

// startCPUProfiler starts profiling ctrl, which may not be listening yet.
func startCPUProfiler(ctx context.Context, ctrl *controller, dir string, logf func(string, ...any)) *cpuProfiler {
	p := &cpuProfiler{ctrl: ctrl, dir: dir, logf: logf, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run(ctx)
	return p
}

func (p *cpuProfiler) run(ctx context.Context) {
	defer close(p.done)
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.ctrl.metricsURL, int(cpuSegment.Seconds()))
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		code, body, err := p.ctrl.get(ctx, url)
		if errors.Is(err, syscall.ECONNREFUSED) && p.ctrl.exited() == nil {
			// The process has not opened its metrics server yet.
			select {
			case <-p.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("%s answered %d: %s (is --profiling on?)", url, code, body)
		}
		if err == nil {
			path := filepath.Join(p.dir, fmt.Sprintf("cpu-%s-%02d.pprof", p.ctrl.label, len(p.files)+1))
			err = os.WriteFile(path, []byte(body), 0o644)
			if err == nil {
				p.files = append(p.files, path)
				continue
			}
		}
		p.logf("controller %s: CPU profile %d not kept, and no further one taken: %v", p.ctrl.label, len(p.files)+1, err)
		return
	}
}

// finish lets the profile in flight complete, takes no other, says where
// the profiles are and returns their files. Only the first call does so;
// later ones return at once, so that a step can defer it as well. On nil,
// a run without --cpu-profile, it does nothing.
func (p *cpuProfiler) finish() []string {
	if p == nil {
		return nil
	}
	var files []string
	p.once.Do(func() {
		close(p.stop)
		<-p.done
		files = p.files
		if len(files) == 0 {
			return
		}
		p.logf("controller %s: CPU profile in %d files of %s: `go tool pprof -top %s` merges them",
			p.ctrl.label, len(files), cpuSegment, filepath.Join(p.dir, "cpu-"+p.ctrl.label+"-*.pprof"))
	})
	return files
}
