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
// # Models
//
// [Options].ModelDir holds one directory per locale, as Debian installs them: a directory
// named for the locale ("en-us") holding the acoustic model (a directory with an mdef file),
// a language model (*.lm.bin) and a pronunciation dictionary (*.dict). A locale is served by
// the directory of its tag, else of its language, else of another region of its language:
// "en-GB" and "en" are heard with "en-us". A locale with no model is an error wrapping
// [ErrNoModel] and [engine.ErrUnsupportedLocale].
package sphinx
