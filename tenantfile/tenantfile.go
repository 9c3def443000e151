// Package tenantfile reads the tenants of a YAML or JSON file into an [engine.StaticTenants].
//
// The file holds one top-level key, "tenants", a list of tenants with the fields of
// [engine.Tenant] in snake_case:
//
//	tenants:
//	  - key: pk_live_acme
//	    name: Acme Bank
//	    prompt: You are Acme Bank's assistant.
//	    voice: en-us
//	    locale: en
//	    theme: {primary: "#0B5FFF", logo_url: "https://acme.example/logo.svg"}
//	    environments:
//	      production: {backend_url: "https://api.acme.example"}
//	      staging: {backend_url: "https://staging.acme.example"}
//	    tools: [...]      # read by the Toolset (package httptools)
//	    intents: {...}    # read by the offline model (package intent)
//	    actions:
//	      transfer:
//	        confirm:
//	          en: {title: Send money, body: "Send ${amount|money} to {to}?", confirm_label: Send, cancel_label: Cancel}
//	    limits: {tool_timeout: 5s, turn_timeout: 30s, max_steps: 6}
//
// Unknown fields are errors, so that a misspelt field does not silently fall back to a default.
// Every error names the file, the tenant and the field.
package tenantfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/convengine/engine"
)

// Options adjust how a file is read. A nil *Options means the defaults.
type Options struct {
	// Expand, when set, replaces ${NAME} references in the file's text before it is parsed,
	// for example with os.Getenv, so that secrets and URLs can come from the environment. NAME
	// is upper case letters, digits and '_'; other text, such as "${amount|money}" in copy, is
	// left as it is.
	Expand func(name string) string
}

// Load reads the file at path and returns a store of its tenants.
func Load(path string, opts *Options) (*engine.StaticTenants, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenantfile: %w", err)
	}
	tenants, err := Parse(path, data, opts)
	if err != nil {
		return nil, err
	}
	store, err := engine.NewStaticTenants(tenants...)
	if err != nil {
		return nil, fmt.Errorf("tenantfile: %s: %w", path, err)
	}
	return store, nil
}

// Parse reads the tenants of data, named name in errors. A name ending in ".json" is read as
// JSON; anything else as YAML, of which JSON is a subset. Tenants are validated.
func Parse(name string, data []byte, opts *Options) ([]*engine.Tenant, error) {
	if opts != nil && opts.Expand != nil {
		data = envRef.ReplaceAllFunc(data, func(ref []byte) []byte {
			return []byte(opts.Expand(string(ref[2 : len(ref)-1])))
		})
	}
	if !strings.EqualFold(filepath.Ext(name), ".json") {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("tenantfile: %s: %w", name, err)
		}
		data = j
	}
	var file struct {
		Tenants []json.RawMessage `json:"tenants"`
	}
	if err := strict(data, &file); err != nil {
		return nil, fmt.Errorf("tenantfile: %s: %w", name, err)
	}
	if len(file.Tenants) == 0 {
		return nil, fmt.Errorf("tenantfile: %s: tenants: the file defines no tenant", name)
	}
	var (
		out  []*engine.Tenant
		errs []error
	)
	for i, raw := range file.Tenants {
		var t engine.Tenant
		if err := strict(raw, &t); err != nil {
			errs = append(errs, fmt.Errorf("tenantfile: %s: tenants[%d]: %w", name, i, err))
			continue
		}
		if err := t.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("tenantfile: %s: tenant %q: %w", name, t.Key, err))
			continue
		}
		out = append(out, &t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

var envRef = regexp.MustCompile(`\$\{[A-Z_][A-Z0-9_]*\}`)

func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return fmt.Errorf("%s: must be a %s", typ.Field, typ.Type)
		}
		return err
	}
	return nil
}
