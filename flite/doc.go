// Package flite is an offline [engine.Synthesizer] over Festival Lite's flite program (Debian
// package flite, whose voices are built into the program: kal, kal16, awb, awb_time, rms and
// slt).
//
// flite speaks only English, far more intelligibly than espeak-ng's English voices: said by
// flite's kal16, the demo's phrases were heard right by the engine's own recogniser 100% of
// the time, against 65 to 82% for espeak-ng's English voices (docs/voice.md). Its
// [Synthesizer.VoiceFor] names a voice for English locales only, so that a synthesizer that
// routes by voice (as the reference server does) gives other languages to espeak-ng.
//
// It runs one flite process per sentence, without a shell; the text is the argument of -t,
// which takes it whole, so no text can become an option. flite writes its WAV only once the whole text is
// synthesized, which for a sentence takes a few milliseconds. Closing the audio or
// cancelling the context kills the process, and the process is always reaped.
package flite
