// Package docs holds the engine's machine-readable descriptions, so that a server can publish
// them and tests can hold the engine to them.
package docs

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the engine's HTTP surface (openapi.yaml).
//
//go:embed openapi.yaml
var OpenAPI []byte

// AsyncAPI is the AsyncAPI 3.0 description of the voice socket's messages (asyncapi.yaml).
//
//go:embed asyncapi.yaml
var AsyncAPI []byte
