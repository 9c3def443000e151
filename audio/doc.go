// Package audio reads and writes the audio the engine exchanges: WAV files of integer PCM, the
// 16-bit little-endian samples inside them, and conversions between sample rates.
//
// The engine decodes the WAV a client sends for transcription with [DecodeWAV], which checks
// every size against the bytes present, so that a truncated file or a lying header is an error
// and never a panic or an allocation beyond the input. Synthesizers that write WAV to a pipe
// are read with [ReadWAVHeader], whose sizes may be placeholders. [EncodeWAV] and
// [AppendWAVHeader] write the files the tts endpoint streams and the transcription services
// receive; [Resample] brings speech to the rate a recogniser needs.
//
// Package audio has no dependencies beyond the standard library: clients import it to build
// the audio they send.
package audio
