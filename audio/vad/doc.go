// Package vad finds speech in 16-bit mono PCM: a voice activity detector of energy and zero
// crossings over an adaptive noise floor, in pure Go, of the kind WebRTC and Pipecat run
// before (or instead of) a neural one.
//
// [Segments] finds the stretches of speech in a whole recording, and [Trim] cuts a recording
// to them with some padding, so that a recogniser gets the utterance without the seconds of
// silence around it. A [Detector] takes a stream, such as the 20 ms frames of a voice socket,
// and reports [SpeechStarted] and [SpeechEnded], so that room noise after the end of speech is
// not taken for the user talking again.
//
// # How
//
// The audio is cut into frames of 20 ms. A one-pole high-pass filter at 100 Hz removes any DC
// offset and most of mains hum. Each frame gets three measures: its level below 2 kHz, where
// vowels are strong; its level above 4 kHz, where fricatives (s, f, sh) are; and its dominant
// frequency, from the spacing of its zero crossings, counted with hysteresis so that faint
// noise on a slow wave adds none.
//
// Each of the two bands has a noise floor, in dB. It follows the frames that are not speech
// slowly up (a time constant of 1 s, at most 3 dB of each frame) and quickly down (100 ms), so
// that it settles a little under the noise's mean; speech does not move it. When every frame
// of the last 3 s was above it, the noise has grown, and the floor jumps to the quietest of
// them. The floor also measures how much the noise varies from frame to frame: the mean
// shortfall of the frames under it, about 0.6 of a standard deviation.
//
// A frame is voiced when, in either band, it is Threshold (9 dB) above the floor, or five of
// the noise's standard deviations if that is more, for the rumble of a fan or a car varies
// much more than hiss; when it is above -65 dBFS, so that dither never counts; and when its
// dominant frequency is 90 Hz or more, which every sound of speech has and hum, thumps and the
// step of a clipped constant do not. Inside an utterance the threshold is 3 dB lower, to keep
// weak consonants and fading ends.
//
// Speech starts with MinSpeech (120 ms) of voiced frames, broken by no more than 40 ms; a
// click or a pop is shorter. It ends after MinSilence (600 ms) without a voiced frame. Voiced
// frames before that run, apart by less than MinSilence, belong to the utterance too: in loud
// noise the first syllables may be too short to start it. [Segments] starts its floor at the
// level of the quietest tenth of the recording, and so finds speech from the first sample; a
// [Detector] takes its first frame for noise, and misses speech that starts the stream until
// the speaker's first pause.
//
// # Limits
//
// It tells loud from quiet, and the sounds of a voice from hum and clicks; it does not know
// what a voice is. Music, a television, other people talking (babble noise) are speech to it.
// Whispered speech, which has no voiced sounds and little energy, is lost in any noise. A noise
// that starts at once and stays (a fan switched on) is speech until the floor catches up, 3 s
// later. In white noise at 10 dB SNR, the weakest consonants are under the noise, and the
// speech is found up to 150 ms short at either end.
//
// # Why not a neural detector
//
// A neural detector such as Silero VAD tells speech from music and babble, but it runs on the
// ONNX runtime: cgo and some 300 MB of native libraries, where this module builds with the Go
// toolchain alone. This detector needs neither, analyses audio some 8000 times faster than
// real time, and does not allocate per frame: enough to trim silence for a recogniser and to
// tell a user's barge-in from the room.
package vad
