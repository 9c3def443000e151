package demobank

import _ "embed"

// ToolsJSON is the demo tenant's tool configuration: a JSON array of the definitions of
// get_balance, list_transactions, get_card, get_savings_goal and transfer in the format of package
// httptools, with paths relative to the URL the [Bank] is served at. A tenant's "tools" field
// can hold it as is. It must not be modified.
//
//go:embed tools.json
var ToolsJSON []byte
