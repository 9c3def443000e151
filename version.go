package engine

// Version is the engine's version, sent on every response as the Engine-Version header. It
// follows semantic versioning; the API it serves is the one of spec/engine-api.md at this
// version (2.0.0 introduced forwarded headers).
const Version = "2.0.0"

// HeaderEngineVersion names the response header that carries [Version].
const HeaderEngineVersion = "Engine-Version"
