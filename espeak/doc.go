// Package espeak is an offline [engine.Synthesizer] over the espeak-ng program (Debian package
// espeak-ng). It runs one espeak-ng process per line of text, without a shell, hands it the text
// on standard input (so that no text can become an option), and streams the samples as the
// program writes them. The process is killed when the request's context is cancelled or the
// audio is closed.
//
// Voices are named as espeak-ng lists them (espeak-ng --voices): by language ("en-us",
// "es-419"), by voice name ("English_(America)") or by file ("gmw/en-US"), optionally with a
// variant ("en-us+f3", "es+Annie"). [Synthesizer.Synthesize] checks the voice against that list
// and returns an error wrapping [engine.ErrUnknownVoice] for any other. [Synthesizer.VoiceFor]
// picks espeak-ng's preferred voice for a locale.
//
// espeak-ng writes 16-bit mono PCM at 22050 Hz.
package espeak
