// Package elevenlabs is an [engine.Synthesizer] over ElevenLabs' text-to-speech API: each line
// is streamed as it is synthesized (POST /v1/text-to-speech/{voice_id}/stream with
// output_format=pcm_16000, the key in the xi-api-key header), so that its first samples reach
// the user while the rest is still being made. The voice socket asks for one sentence at a
// time while the model is still writing, so the first audio of an answer leaves before the
// model has finished it.
//
// What ElevenLabs sends is bounded: at most Options.MaxAudio of audio per line, a time-out for
// the answer (Options.Timeout) and for each read of the audio after it (Options.ReadTimeout). A
// line longer than the model's limit (Options.MaxCharacters) is spoken in pieces cut at
// sentence ends, one request after the other. A voice id that is not one (letters and digits)
// or that ElevenLabs does not know is [engine.ErrUnknownVoice]; 401, 429 and 5xx are errors
// wrapping a *cloudspeech status error that names the status and never the key.
//
// Requests and messages follow ElevenLabs' API reference (elevenlabs.io/docs: "Stream speech",
// /api-reference/text-to-speech/stream; output formats; error bodies {"detail":{"status",
// "message"}}) and its Python SDK (elevenlabs/elevenlabs-python: text_to_speech.stream).
package elevenlabs
