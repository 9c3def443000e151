// Package azurespeech hears and speaks with Azure AI Speech over its REST APIs, for a tenant
// whose speech must stay in a region: [NewTranscriber] is an [engine.Transcriber] over the
// speech-to-text REST API for short audio, [NewSynthesizer] an [engine.Synthesizer] over the
// text-to-speech REST API. Azure's Go SDK needs cgo and its native library; these are plain
// HTTP.
//
// # Endpoints and keys
//
// The endpoints are the region's: https://{region}.stt.speech.microsoft.com for recognition,
// https://{region}.tts.speech.microsoft.com for synthesis and
// https://{region}.api.cognitive.microsoft.com for tokens; Options.Endpoint (the scheme and
// host of a private endpoint, such as a resource's custom domain) replaces all three. The
// key goes in Ocp-Apim-Subscription-Key, or, with Options.Tokens, is exchanged at
// /sts/v1.0/issueToken for a bearer token of ten minutes, renewed after nine. [Geography]
// and [InRegion] tell which data region a speech region is in, for the host's check of a
// tenant's data_region.
//
// # Recognition
//
// POST /speech/recognition/conversation/cognitiveservices/v1?language=…&format=detailed with
// the utterance as 16 kHz mono PCM WAV (audio/wav; codecs=audio/pcm; samplerate=16000),
// resampled when it comes at another rate; at most 60 seconds, the API's limit. The answer's
// RecognitionStatus decides: Success is the best of NBest (format=detailed) or DisplayText
// (format=simple); NoMatch and BabbleTimeout are speech not understood
// ([engine.ErrNotUnderstood]); InitialSilenceTimeout is no speech (""); Error and
// TooManyRequests are errors.
//
// # Synthesis
//
// POST /cognitiveservices/v1 with SSML naming the voice and its locale (a voice name is
// "de-DE-KatjaNeural": its locale is its first two parts) and X-Microsoft-OutputFormat:
// raw-16khz-16bit-mono-pcm, the audio streamed as it comes. A line longer than
// Options.MaxCharacters is spoken in pieces cut at sentence ends.
//
// # Faults
//
// Every wait is bounded (Options.Timeout for an answer, Options.ReadTimeout between two reads
// of audio) and so is everything read (an answer of at most 1 MiB, at most Options.MaxAudio
// seconds of audio a line). 401, 403, 429 and 5xx are errors wrapping a *cloudspeech status
// error that names the status and never the key; a host falls back to the next provider on
// them.
//
// Requests and answers follow Microsoft's documentation (learn.microsoft.com
// /azure/ai-services/speech-service/rest-speech-to-text-short, rest-text-to-speech,
// regions) and the service messages of its JavaScript SDK
// (microsoft/cognitive-services-speech-sdk-js src/common.speech/ServiceMessages
// DetailedSpeechPhrase.ts, SimpleSpeechPhrase.ts, Enums.ts RecognitionStatus).
package azurespeech
