package usage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convengine/engine"
)

// Defaults of [Options].
const (
	DefaultMaxBuffered = 100_000
	DefaultMaxBatch    = 1000
)

// The pauses between the writes of a batch that failed: from the first to the last, doubling.
const (
	firstRetry = 100 * time.Millisecond
	lastRetry  = 30 * time.Second
	// logEvery is how often a failing sink, or a full buffer, is logged at most.
	logEvery = time.Minute
)

// Options configure a [Meter]. The zero value and nil mean the defaults.
type Options struct {
	// Sink receives the records; nil means they are only counted in the metrics.
	Sink Sink
	// Registerer, when set, registers the meter's Prometheus counters.
	Registerer prometheus.Registerer
	// Logger logs a sink that fails and records dropped; nil means slog.Default().
	Logger *slog.Logger
	// MaxBuffered bounds the records waiting for the sink (besides the batch being written);
	// past it, new records are dropped and counted in engine_usage_dropped_records_total. 0
	// means DefaultMaxBuffered.
	MaxBuffered int
	// MaxBatch bounds the records of one write; 0 means DefaultMaxBatch.
	MaxBatch int
	// Now stamps the records; nil means time.Now.
	Now func() time.Time
}

// Meter makes a [Record] of each piece of work the engine reports to its Observer, counts it in
// Prometheus counters and hands it to the Sink, in batches, from a goroutine of its own: the
// engine's hooks only append the record to a buffer. Its methods are safe for concurrent use.
// [Meter.Close] ends it.
type Meter struct {
	sink        Sink
	log         *slog.Logger
	now         func() time.Time
	maxBuffered int
	maxBatch    int
	mx          *counters

	wake    chan struct{}
	done    chan struct{} // closed when the writer has ended
	ctx     context.Context
	cancel  context.CancelFunc // stops the writer, what it holds unwritten
	closing sync.Once

	mu        sync.Mutex
	pending   []Record // from head on: records not taken yet
	head      int
	closed    bool   // Close was called: no more records
	added     uint64 // records accepted so far
	written   uint64 // records the sink took (or dropped at Close)
	progress  chan struct{}
	droppedN  uint64 // records dropped since the last log line
	dropLog   time.Time
	lastError error
}

// New returns a Meter and starts its writer.
func New(opts *Options) (*Meter, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = DefaultMaxBuffered
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	mx, err := newCounters(o.Registerer)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Meter{sink: o.Sink, log: o.Logger, now: o.Now, maxBuffered: o.MaxBuffered, maxBatch: o.MaxBatch, mx: mx,
		wake: make(chan struct{}, 1), done: make(chan struct{}), ctx: ctx, cancel: cancel, progress: make(chan struct{})}
	go m.run()
	return m, nil
}

// Observer returns an Observer that meters the calls of the model (ModelCall), tool calls
// (ToolEnd) and speech (Speech), then calls next's hooks of the same name; next's other hooks
// are its own. A nil next is no other observer.
func (m *Meter) Observer(next *engine.Observer) *engine.Observer {
	o := &engine.Observer{}
	if next != nil {
		*o = *next
	}
	model, tool, speech := o.ModelCall, o.ToolEnd, o.Speech
	o.ModelCall = func(ctx context.Context, e engine.ModelCallEvent) {
		m.add(modelRecord(m.now(), &e))
		if model != nil {
			model(ctx, e)
		}
	}
	o.ToolEnd = func(ctx context.Context, e engine.ToolEvent) {
		m.add(toolRecord(m.now(), &e))
		if tool != nil {
			tool(ctx, e)
		}
	}
	o.Speech = func(ctx context.Context, e engine.SpeechEvent) {
		m.add(speechRecord(m.now(), &e))
		if speech != nil {
			speech(ctx, e)
		}
	}
	return o
}

// Add meters r, as the Observer does: for work the engine does not observe, such as a host's
// own calls of a model.
func (m *Meter) Add(r Record) { m.add(r) }

func (m *Meter) add(r Record) {
	m.mu.Lock()
	if m.closed || len(m.pending)-m.head >= m.maxBuffered {
		m.droppedN++
		logNow := m.now().Sub(m.dropLog) >= logEvery
		n := m.droppedN
		if logNow {
			m.dropLog, m.droppedN = m.now(), 0
		}
		closed := m.closed
		m.mu.Unlock()
		m.mx.dropped.Inc()
		if logNow {
			m.log.Warn("usage: records dropped: the meter's buffer is full, or the meter is closed", "dropped", n, "closed", closed)
		}
		return
	}
	if len(m.pending) == cap(m.pending) && m.head > 0 {
		// Reuse the room the writer has taken from, rather than grow.
		n := copy(m.pending, m.pending[m.head:])
		clear(m.pending[n:])
		m.pending, m.head = m.pending[:n], 0
	}
	m.pending = append(m.pending, r)
	m.added++
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// take moves up to maxBatch pending records to batch, and counts them; it reports whether the
// meter is closing and has nothing more.
func (m *Meter) take(batch []Record) ([]Record, bool) {
	m.mu.Lock()
	n := min(len(m.pending)-m.head, m.maxBatch)
	batch = append(batch[:0], m.pending[m.head:m.head+n]...)
	m.head += n
	if m.head == len(m.pending) {
		clear(m.pending) // lets the records' strings go
		m.pending, m.head = m.pending[:0], 0
		if cap(m.pending) > 4*m.maxBatch {
			m.pending = nil // lets a burst's backing array go
		}
	}
	over := m.closed && n == 0
	m.mu.Unlock()
	for i := range batch {
		m.mx.count(&batch[i])
	}
	return batch, over
}

// wrote marks n records as written.
func (m *Meter) wrote(n int, err error) {
	m.mu.Lock()
	m.written += uint64(n)
	m.lastError = err
	close(m.progress)
	m.progress = make(chan struct{})
	m.mu.Unlock()
}

func (m *Meter) run() {
	defer close(m.done)
	batch := make([]Record, 0, min(m.maxBatch, 64))
	pause := firstRetry
	var failedLog time.Time
	for {
		var over bool
		batch, over = m.take(batch)
		if over {
			return
		}
		if len(batch) == 0 {
			select {
			case <-m.wake:
			case <-m.ctx.Done():
				return
			}
			continue
		}
		for m.sink != nil {
			err := m.sink.WriteUsage(m.ctx, batch)
			if err == nil {
				pause = firstRetry
				break
			}
			if m.ctx.Err() != nil {
				return // Close gave up: what is held stays unwritten
			}
			m.mu.Lock()
			m.lastError = err
			m.mu.Unlock()
			m.mx.failures.Inc()
			if now := m.now(); now.Sub(failedLog) >= logEvery {
				failedLog = now
				m.log.Warn("usage: the sink failed; the batch will be written again", "records", len(batch), "err", err)
			}
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-m.ctx.Done():
				t.Stop()
				return
			}
			pause = min(2*pause, lastRetry)
		}
		m.wrote(len(batch), nil)
	}
}

// Flush waits until the records made before it was called have been written, or ctx is done.
func (m *Meter) Flush(ctx context.Context) error {
	m.mu.Lock()
	target := m.added
	m.mu.Unlock()
	for {
		m.mu.Lock()
		written, progress := m.written, m.progress
		m.mu.Unlock()
		if written >= target {
			return nil
		}
		select {
		case <-progress:
		case <-m.done:
			return m.unwritten()
		case <-ctx.Done():
			return m.unwritten()
		}
	}
}

// ErrUnwritten is wrapped by the error of [Meter.Close] and [Meter.Flush] when records were
// not written.
var ErrUnwritten = errors.New("usage: records not written")

// unwritten returns the error that says how many records are not written yet.
func (m *Meter) unwritten() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.added - m.written
	if n == 0 {
		return nil
	}
	if m.lastError != nil {
		return fmt.Errorf("%w: %d, the sink failing: %w", ErrUnwritten, n, m.lastError)
	}
	return fmt.Errorf("%w: %d", ErrUnwritten, n)
}

// Close stops taking records and writes those buffered, until ctx is done: then it stops
// writing, and reports how many records were not written (ErrUnwritten) and why. Records the
// hooks make after Close are dropped and counted as dropped. Close the meter after the engine's
// work is over (after Engine.Shutdown).
func (m *Meter) Close(ctx context.Context) error {
	m.closing.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		select {
		case m.wake <- struct{}{}:
		default:
		}
	})
	select {
	case <-m.done:
	case <-ctx.Done():
		m.cancel()
		<-m.done
	}
	m.cancel()
	return m.unwritten()
}
