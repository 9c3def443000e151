// Package testkit holds what the tests of the engine and of its adapters share: real
// redis-server processes on loopback ports (redis.go), and Redis as a deployment with a replica
// and Redis Sentinels that fail it over (sentinel.go); PostgreSQL servers on loopback ports,
// run as the user nobody when the tests run as root, which can be stopped and started again
// (postgres.go); speech spoken and heard with espeak-ng and pocketsphinx, failing with the
// Debian packages to install when they are missing, a synthesizer without a program, and audio
// that the speech detector takes for speech or for a quiet room (speech.go); and HTTP
// exchanges with the engine checked against its OpenAPI document (openapi.go). Only tests
// and the fault drill (cmd/enginedrill) import it.
package testkit
