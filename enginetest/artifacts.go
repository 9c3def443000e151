package enginetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/convengine/engine"
)

// ArtifactsEnv names the environment variable of a directory where tests keep what the engine
// wrote where data rests or leaves: log lines, turn-log entries, trace exports, the events a
// client received. The project's test command sets it and, once every test has run, scans the
// directory for the card numbers and IBANs the tests sent. Unset, nothing is kept.
const ArtifactsEnv = "ENGINE_TEST_ARTIFACTS"

// The kinds of artifacts, each kept in files of its own.
const (
	ArtifactLog     = "log"     // a log line
	ArtifactTurnLog = "turnlog" // the data of an event a TurnLog was given
	ArtifactTrace   = "trace"   // a span or a trace export
	ArtifactEvents  = "events"  // what a client received from the engine
	ArtifactRecord  = "record"  // the conversation record's files as they rest, and its exports
)

// artifactsDir is the directory ArtifactsEnv names, read once: Logs writes through it on
// every line.
var artifactsDir = sync.OnceValue(func() string { return os.Getenv(ArtifactsEnv) })

var artifacts struct {
	mu    sync.Mutex
	files map[string]*os.File
}

// KeepArtifact appends data, one record, to this process's file of kind in the directory
// [ArtifactsEnv] names, when it names one. It is safe for concurrent use. A directory that
// cannot be written is a panic: a scan of what was not kept would pass for nothing.
func KeepArtifact(kind string, data []byte) {
	dir := artifactsDir()
	if dir == "" || len(data) == 0 {
		return
	}
	artifacts.mu.Lock()
	defer artifacts.mu.Unlock()
	f := artifacts.files[kind]
	if f == nil {
		name := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.txt", kind, os.Getpid(), time.Now().UnixNano()))
		var err error
		if f, err = os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
			panic(fmt.Sprintf("enginetest: %s: %v", ArtifactsEnv, err))
		}
		if artifacts.files == nil {
			artifacts.files = map[string]*os.File{}
		}
		artifacts.files[kind] = f
	}
	if data[len(data)-1] != '\n' {
		data = append(data[:len(data):len(data)], '\n')
	}
	if _, err := f.Write(data); err != nil {
		panic(fmt.Sprintf("enginetest: %s: %v", ArtifactsEnv, err))
	}
}

// ArtifactWriter is an io.Writer whose writes are kept as artifacts of kind.
func ArtifactWriter(kind string) io.Writer { return artifactWriter(kind) }

type artifactWriter string

func (w artifactWriter) Write(p []byte) (int, error) {
	KeepArtifact(string(w), p)
	return len(p), nil
}

// DebugLogger returns a logger at debug level whose lines are kept as artifacts, and
// otherwise dropped: for an engine whose test does not read its logs.
func DebugLogger() *slog.Logger {
	if artifactsDir() == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewJSONHandler(ArtifactWriter(ArtifactLog), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// KeepTurnLog returns l, with the data of each event it is given kept as an artifact when
// [ArtifactsEnv] is set. A [engine.TurnReserver] stays one.
func KeepTurnLog(l engine.TurnLog) engine.TurnLog {
	if l == nil || artifactsDir() == "" {
		return l
	}
	k := keptTurnLog{l}
	if r, ok := l.(engine.TurnReserver); ok {
		return keptReserver{k, r}
	}
	return k
}

type keptTurnLog struct{ engine.TurnLog }

func (l keptTurnLog) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	for _, ev := range evs {
		KeepArtifact(ArtifactTurnLog, ev.Data)
	}
	return l.TurnLog.AppendEvents(ctx, turn, owner, evs, done, keep)
}

type keptReserver struct {
	keptTurnLog
	r engine.TurnReserver
}

func (l keptReserver) ReserveTurn(ctx context.Context, turn string, owner *engine.TurnOwner, keep time.Time) error {
	return l.r.ReserveTurn(ctx, turn, owner, keep)
}
