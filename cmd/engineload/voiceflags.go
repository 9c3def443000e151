package main

import (
	"errors"
	"flag"
	"time"
)

// voiceFlags are the settings of the voice and idle modes, and of a -local engine's bench
// speech.
type voiceFlags struct {
	// voiceText sends each voice turn as typed text instead of audio.
	voiceText bool
	// utterance is the length of the audio of each voice turn.
	utterance time.Duration
	// the bench speech and the model's sentences of -local
	transcribeDelay time.Duration
	synthDelay      time.Duration
	sentences       int
	// hold is how long an idle operation holds its socket.
	hold time.Duration
}

func (v *voiceFlags) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&v.voiceText, "voice-text", false, "voice: send each turn as typed text instead of audio (for a server whose recognizer needs real speech)")
	fs.DurationVar(&v.utterance, "utterance", time.Second, "voice: length of the audio of each turn (a quiet 440 Hz tone)")
	fs.DurationVar(&v.transcribeDelay, "transcribe-delay", 0, "-local: the bench transcriber's delay")
	fs.DurationVar(&v.synthDelay, "synth-delay", 0, "-local: the bench synthesizer's delay per sentence")
	fs.IntVar(&v.sentences, "sentences", 0, "-local: sentences of the model's answer (0: one, without a full stop, spoken when the answer ends)")
	fs.DurationVar(&v.hold, "hold", time.Second, "idle: how long one operation holds the socket, idle")
}

func (v *voiceFlags) check() error {
	if v.utterance <= 0 || v.hold <= 0 || v.transcribeDelay < 0 || v.synthDelay < 0 || v.sentences < 0 {
		return errors.New("-utterance and -hold must be positive; -transcribe-delay, -synth-delay and -sentences cannot be negative")
	}
	return nil
}
