// Package deepgram is an [engine.StreamingTranscriber] over Deepgram's speech-to-text API: the
// live API over a WebSocket (GET /v1/listen) hears the voice socket's utterances while they are
// spoken, and the pre-recorded API (POST /v1/listen) hears audio that comes whole, such as the
// audio_base64 of a turn.
//
// # Live recognition
//
// [Transcriber.Listen] opens the WebSocket with encoding=linear16, the sample rate,
// interim_results, endpointing and utterance_end_ms, the key in "Authorization: Token …".
// Audio goes up in binary frames as the engine writes it; a KeepAlive is sent when none went
// for five seconds. [engine.Listening.Finish] sends Finalize and takes the transcript from the
// is_final Results up to the one marked from_finalize, ordered by their start, then sends
// CloseStream. Heard reports the interim hypothesis, and the end of the utterance when a
// Results said speech_final or an UtteranceEnd came.
//
// Every message from Deepgram is bounded (Options.MaxMessage) and every wait has a time-out:
// the connection (Options.Timeout), the final result after Finalize (Options.FinalTimeout) and
// each read (Options.ReadTimeout). A connection that closes before the final result, a final
// that never comes, or an error status on the upgrade (401, 429, 5xx) fails Finish with an
// error, and the engine transcribes the recording instead ([engine.TurnInput].Listening): with
// the reference server, through the next provider.
//
// Message shapes follow Deepgram's documentation (developers.deepgram.com: "Live Audio"
// /reference/speech-to-text/listen-streaming, "Configure Endpointing and Interim Results",
// "Utterance End", "Finalize", "Close Stream", "Keep Alive") and its SDKs' types
// (@deepgram/sdk LiveTranscriptionEvent, deepgram/deepgram-go-sdk
// pkg/api/listen/v1/websocket/interfaces).
package deepgram
