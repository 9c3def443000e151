package pgstore_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// size is what the record takes in a database: each table with its TOAST and indexes, each
// index, and the average row of record_entries by kind.
type size struct {
	Tables, Indexes map[string]int64
	Row             map[string]float64 // pg_column_size of a record_entries row, by kind
	Rows            map[string]int64
}

// measure vacuums the record's tables and measures them.
func measure(tb testing.TB, url string) size {
	tb.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		tb.Fatal(err)
	}
	z := size{Tables: map[string]int64{}, Indexes: map[string]int64{}, Row: map[string]float64{}, Rows: map[string]int64{}}
	rows, _ := c.Query(ctx, `SELECT relname::text, pg_total_relation_size(oid) FROM pg_class
		WHERE relkind = 'r' AND relname LIKE 'record\_%'`)
	var name string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error { z.Tables[name] = n; return nil }); err != nil {
		tb.Fatal(err)
	}
	rows, _ = c.Query(ctx, `SELECT indexrelname::text, pg_relation_size(indexrelid) FROM pg_stat_user_indexes
		WHERE relname LIKE 'record\_%'`)
	if _, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error { z.Indexes[name] = n; return nil }); err != nil {
		tb.Fatal(err)
	}
	var avg float64
	rows, _ = c.Query(ctx, `SELECT kind, count(*), avg(pg_column_size(e.*))::float8 FROM record_entries e GROUP BY kind`)
	if _, err := pgx.ForEachRow(rows, []any{&name, &n, &avg}, func() error { z.Rows[name], z.Row[name] = n, avg; return nil }); err != nil {
		tb.Fatal(err)
	}
	return z
}

// String lists the sizes, largest first.
func (z size) String() string {
	var b strings.Builder
	list := func(title string, m map[string]int64) {
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool { return m[names[i]] > m[names[j]] })
		fmt.Fprintf(&b, "%s:\n", title)
		for _, k := range names {
			fmt.Fprintf(&b, "  %-36s %10d bytes\n", k, m[k])
		}
	}
	list("tables (with TOAST and indexes)", z.Tables)
	list("indexes", z.Indexes)
	for k, n := range z.Rows {
		fmt.Fprintf(&b, "record_entries %-8s %7d rows, %7.0f bytes a row (pg_column_size)\n", k, n, z.Row[k])
	}
	return b.String()
}
