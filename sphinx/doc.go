// Package sphinx is an offline [engine.Transcriber] over pocketsphinx (Debian packages
// pocketsphinx, for the pocketsphinx_continuous program, and pocketsphinx-en-us, for the US
// English model in /usr/share/pocketsphinx/model/en-us).
//
// It runs one pocketsphinx_continuous process per utterance, without a shell, hands it the
// samples on standard input, and kills it when the request's context is cancelled.
//
// # Two ways to listen
//
// [Transcriber.Transcribe] recognises free-form speech with the model's general language
// model. On short commands spoken to an assistant it is often wrong: the language model knows
// all of English and nothing of the assistant.
//
// [Transcriber.TranscribeFor], which the engine calls because the Transcriber implements
// [engine.TenantTranscriber], listens with a JSGF grammar of the tenant's own phrases when
// [Options].Grammar gives one, such as the grammar package intent writes from a tenant's
// intent examples and slot values. The recogniser then hears only those phrases, and hears
// them reliably. Words missing from the model's pronunciation dictionary are left out of the
// grammar through the known function Grammar receives.
//
// # What it did not hear
//
// A grammar makes the recogniser hear one of its phrases in any speech: "tell me my balance"
// came out as "pay taylor eleven". [Options].Confirm names the words of a result that must be
// confirmed, such as an amount's number words; a second, free-form pass over the same audio
// must hear them too. When it does not, [Options].Unconfirmed may keep the request without
// them ("send money to alex", so that the assistant asks how much); otherwise the result is an
// error wrapping [engine.ErrNotUnderstood], which the engine answers "Sorry, I didn't catch
// that". Only results with such words pay for the second pass (about 0.6 s of CPU for a
// two-second phrase, against 0.06 s for the grammar's).
//
// A grammar's runs load a dictionary of the grammar's own words (the model's pronunciations
// of them, a few kilobytes, handed to the program as an in-memory file) instead of the model's
// whole dictionary, whose loading was most of a short phrase's time: a grammar run of "what
// is my balance" went from 0.15 s to 0.06 s, hearing the same.
//
// # Silence
//
// The speech is found with package audio/vad and only it, with 200 ms around it, reaches the
// program, whose own voice activity detection is off: with it, a phrase with a second of
// silence around it was refused as not matching the grammar, and results flipped with 50 ms
// more or less. Audio without speech is "" without running the program. The grammar search
// runs with wider beams than the program's defaults, which keep the right phrase through
// noise.
//
// # Models
//
// [Options].ModelDir holds one directory per locale, as Debian installs them: a directory
// named for the locale ("en-us") holding the acoustic model (a directory with an mdef file),
// a language model (*.lm.bin) and a pronunciation dictionary (*.dict). A locale is served by
// the directory of its tag, else of its language, else of another region of its language:
// "en-GB" and "en" are heard with "en-us". A locale with no model is an error wrapping
// [ErrNoModel] and [engine.ErrUnsupportedLocale].
package sphinx
