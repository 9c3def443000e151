module github.com/convengine/engine

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/go-jose/go-jose/v4 v4.1.8
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.24.0
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/kr/text v0.1.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
)
