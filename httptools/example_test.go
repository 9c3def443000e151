package httptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

func Example() {
	backend := httptest.NewServer(demobank.New(nil))
	defer backend.Close()

	tenant := &engine.Tenant{
		Key:          "demo",
		Name:         "Demo Bank",
		Tools:        json.RawMessage(`[{"name":"get_savings_goal","method":"GET","path":"/goal","status":"Checking your savings goal","timeout":"5s"}]`),
		Environments: map[string]*engine.Environment{"production": {BackendURL: backend.URL}},
	}
	env := &engine.ToolEnv{
		Tenant:      tenant,
		Environment: tenant.Environments["production"],
		UserToken:   "user-token",
		RequestID:   "prod-example",
	}

	ts := httptools.New(nil)
	tools, err := ts.Tools(context.Background(), env)
	if err != nil {
		panic(err)
	}
	fmt.Println(tools[0].Name, "/", tools[0].Status, "/", tools[0].Timeout)

	res, err := ts.Call(context.Background(), env, engine.ToolCall{Name: "get_savings_goal", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Content))
	// Output:
	// get_savings_goal / Checking your savings goal / 5s
	// {"name":"Trip to Lisbon","target":2000,"saved":1300,"progress":0.65,"formatted_saved":"$1,300.00","formatted_target":"$2,000.00","percent":"65%"}
}
