package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/record"
)

// recordsUsage is the help of "engine records".
const recordsUsage = `usage: engine records COMMAND [flags]

The conversation record of -records / ENGINE_RECORDS, with the engine's key from
ENGINE_SIGNING_KEY (or the key the default SQLite record keeps beside its database):

  export -tenant KEY (-user ID | -token-stdin) [-conversation ID]
        a user's conversations as JSON lines, with what verifies them offline
  verify [-public-key FILE] [FILE]
        the whole record, or an export (FILE, "-" for standard input): exit 0 when
        intact, 1 naming the first broken place
  erase -tenant KEY (-user ID | -token-stdin)
        destroys the user's data key: what they said and were told becomes unreadable,
        while the record still verifies and their actions' evidence stays
  hold -tenant KEY (-user ID | -token-stdin) [-release]
        puts the user under legal hold (or releases it): no erasure, no pruning
  public-key
        prints the public key that checks the record's checkpoints (PEM)

A user is named by the id the record holds (-user), or by their X-Token read from
standard input (-token-stdin), never by an argument a process list would show.
`

// recordsCommand runs "engine records ..." and returns the exit code: 0, 1 for a broken record
// or a failure, 2 for bad usage.
func recordsCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprint(stderr, recordsUsage)
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("engine records "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, recordsUsage) }
	where := fs.String("records", getenv("ENGINE_RECORDS"), "the record: sqlite:PATH, a postgres:// URL (ENGINE_RECORDS)")
	tenant := fs.String("tenant", "", "the tenant's engine key")
	user := fs.String("user", "", "the user's id as the record holds it")
	tokenStdin := fs.Bool("token-stdin", false, "read the user's X-Token from standard input")
	conversation := fs.String("conversation", "", "one conversation's id")
	publicKey := fs.String("public-key", "", "PEM file of the public keys that check checkpoints")
	release := fs.Bool("release", false, "release the legal hold")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "engine records:", err)
		return 1
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "engine records %s: %s\n", cmd, msg)
		return 2
	}
	switch cmd {
	case "export", "erase", "hold", "verify", "public-key":
	default:
		return usage("unknown command; see engine records -help")
	}
	place, err := parseRecords(*where, getenv)
	if err != nil {
		return usage(err.Error())
	}
	if place.off && !(cmd == "verify" && fs.NArg() > 0) {
		return usage("no record: name it with -records or ENGINE_RECORDS")
	}
	key, err := recordKey(getenv("ENGINE_SIGNING_KEY"), place)
	if err != nil && !(cmd == "verify" && *publicKey != "") {
		return fail(err)
	}

	if cmd == "public-key" {
		pem, err := record.PublicKeyPEM(key)
		if err != nil {
			return fail(err)
		}
		stdout.Write(pem)
		return 0
	}
	if cmd == "verify" {
		previous, err := previousKeys(getenv("ENGINE_PREVIOUS_SIGNING_KEYS"))
		if err != nil {
			return fail(err)
		}
		return verifyRecords(ctx, place, append([][]byte{key}, previous...), *publicKey, fs.Args(), stdin, stdout, stderr)
	}

	// export, erase and hold name one user of one tenant.
	switch {
	case *tenant == "":
		return usage("-tenant is required")
	case (*user == "") == !*tokenStdin:
		return usage("name the user with -user ID or -token-stdin, one of them")
	}
	id := *user
	if *tokenStdin {
		if id, err = userOfToken(stdin, *tenant, key); err != nil {
			return fail(err)
		}
	}
	store, err := place.open(ctx)
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	previous, err := previousKeys(getenv("ENGINE_PREVIOUS_SIGNING_KEYS"))
	if err != nil {
		return fail(err)
	}
	rec, err := record.New(store, &record.Options{Key: key, PreviousKeys: previous})
	if err != nil {
		return fail(err)
	}
	defer rec.Close(context.WithoutCancel(ctx))
	switch cmd {
	case "export":
		w := bufio.NewWriter(stdout)
		if err := rec.Export(ctx, w, record.ExportQuery{Tenant: *tenant, User: id, Conversation: *conversation}); err != nil {
			return fail(err)
		}
		if err := w.Flush(); err != nil {
			return fail(err)
		}
	case "erase":
		if err := rec.Erase(ctx, *tenant, id); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "erased: what the user said and was told can no longer be read; the evidence of their actions is kept\n")
	case "hold":
		op, what := rec.Hold, "held"
		if *release {
			op, what = rec.Release, "released"
		}
		if err := op(ctx, *tenant, id); err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, what)
	}
	return 0
}

// verifyRecords verifies the store, or the exports named in files, against the public keys of
// keyFile or else those derived from the engine's keys (current and previous).
func verifyRecords(ctx context.Context, place recordsPlace, engineKeys [][]byte, keyFile string, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var keys []ed25519.PublicKey
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err == nil {
			keys, err = record.ParsePublicKeys(b)
		}
		if err != nil {
			fmt.Fprintln(stderr, "engine records verify: -public-key:", err)
			return 2
		}
	} else {
		for _, k := range engineKeys {
			pub, err := record.PublicKey(k)
			if err != nil {
				fmt.Fprintln(stderr, "engine records verify:", err)
				return 1
			}
			keys = append(keys, pub)
		}
	}
	var (
		rep *record.Report
		err error
	)
	switch {
	case len(files) > 1:
		fmt.Fprintln(stderr, "engine records verify: one export at a time")
		return 2
	case len(files) == 1:
		in := stdin
		if files[0] != "-" {
			f, ferr := os.Open(files[0])
			if ferr != nil {
				fmt.Fprintln(stderr, "engine records verify:", ferr)
				return 1
			}
			defer f.Close()
			in = f
		}
		rep, err = record.VerifyExport(in, keys)
	default:
		store, serr := place.open(ctx)
		if serr != nil {
			fmt.Fprintln(stderr, "engine records verify:", serr)
			return 1
		}
		defer store.Close()
		rep, err = record.Verify(ctx, store, keys)
	}
	if err != nil && rep == nil {
		fmt.Fprintln(stderr, "engine records verify:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d conversations, %d entries, %d checkpoints, %d prune statements; %d entries not yet covered by a checkpoint\n",
		rep.Chains, rep.Entries, rep.Checkpoints, rep.Prunes, rep.Uncovered)
	if rep.Latest != nil {
		fmt.Fprintf(stdout, "newest checkpoint: %d at %s, root %x\n", rep.Latest.Seq, rep.Latest.At.Format("2006-01-02T15:04:05Z07:00"), rep.Latest.Root)
	}
	if err != nil {
		fmt.Fprintln(stderr, "engine records verify:", err)
		return 1
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, "BROKEN:", p)
		}
		if rep.More > 0 {
			fmt.Fprintf(stdout, "and %d more\n", rep.More)
		}
		return 1
	}
	fmt.Fprintln(stdout, "intact")
	return 0
}

// recordKey is the engine's key as the server finds it, never made anew: ENGINE_SIGNING_KEY,
// or the key the SQLite record keeps beside its database.
func recordKey(b64 string, place recordsPlace) ([]byte, error) {
	if b64 != "" {
		key, _, err := signingKey(b64)
		return key, err
	}
	if place.sqlite == "" {
		return nil, errors.New("ENGINE_SIGNING_KEY is not set")
	}
	if _, err := os.Stat(place.keyFile()); err != nil {
		return nil, fmt.Errorf("ENGINE_SIGNING_KEY is not set, and there is no key beside the record: %w", err)
	}
	key, _, err := keptKey(place.keyFile())
	return key, err
}

// userOfToken reads a user's X-Token from r and names the user as the record does: the keyed
// hash the engine makes of it with key.
func userOfToken(r io.Reader, tenant string, key []byte) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 16<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	token := strings.TrimSpace(line)
	if token == "" {
		return "", errors.New("-token-stdin: no token on standard input")
	}
	tenants, err := engine.NewStaticTenants()
	if err != nil {
		return "", err
	}
	e, err := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), SigningKey: key,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "", err
	}
	defer e.Close()
	return e.UserKey(&engine.Caller{EngineKey: tenant, UserToken: token}), nil
}
