package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
	// recognizer is the -local engine's recogniser: "bench", or Deepgram's stand-in heard
	// live ("deepgram") or after the end of speech ("deepgram-batch"), answering after
	// recognizerFinal (the final after Finalize) or recognizerBatch (a pre-recorded request).
	recognizer                       string
	recognizerFinal, recognizerBatch time.Duration
	// synthesizer is the -local engine's voice: "bench", or ElevenLabs' stand-in spoken to over
	// its input stream ("elevenlabs") or its HTTP API ("elevenlabs-http"), whose first audio of
	// each sentence comes synthFirstByte after its text.
	synthesizer    string
	synthFirstByte time.Duration
}

func (v *voiceFlags) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&v.voiceText, "voice-text", false, "voice: send each turn as typed text instead of audio (for a server whose recognizer needs real speech)")
	fs.DurationVar(&v.utterance, "utterance", time.Second, "voice: length of the audio of each turn (a quiet 440 Hz tone)")
	fs.DurationVar(&v.transcribeDelay, "transcribe-delay", 0, "-local: the bench transcriber's delay")
	fs.DurationVar(&v.synthDelay, "synth-delay", 0, "-local: the bench synthesizer's delay per sentence")
	fs.IntVar(&v.sentences, "sentences", 0, "-local: sentences of the model's answer (0: one, without a full stop, spoken when the answer ends)")
	fs.DurationVar(&v.hold, "hold", time.Second, "idle: how long one operation holds the socket, idle")
	fs.StringVar(&v.recognizer, "recognizer", "bench", "-local voice: the engine's recogniser: bench, deepgram (Deepgram's stand-in, live while the user speaks) or deepgram-batch (the same, pre-recorded after the end of speech)")
	fs.DurationVar(&v.recognizerFinal, "recognizer-final", 50*time.Millisecond, "-local voice: how long Deepgram's stand-in takes to send the final result after Finalize")
	fs.DurationVar(&v.recognizerBatch, "recognizer-batch", 500*time.Millisecond, "-local voice: how long Deepgram's stand-in takes to answer a pre-recorded request")
	fs.StringVar(&v.synthesizer, "synthesizer", "bench", "-local voice: the engine's voice: bench, elevenlabs (ElevenLabs' stand-in over its input-streaming WebSocket) or elevenlabs-http (the same over its HTTP streaming API)")
	fs.DurationVar(&v.synthFirstByte, "synth-first-byte", 75*time.Millisecond, "-local voice: how long ElevenLabs' stand-in takes to send a sentence's first audio (ElevenLabs documents ~75 ms for eleven_flash_v2_5)")
}

func (v *voiceFlags) check() error {
	if v.recognizer != "bench" && v.recognizer != "deepgram" && v.recognizer != "deepgram-batch" {
		return errors.New("-recognizer must be bench, deepgram or deepgram-batch")
	}
	if v.synthesizer != "bench" && v.synthesizer != "elevenlabs" && v.synthesizer != "elevenlabs-http" {
		return errors.New("-synthesizer must be bench, elevenlabs or elevenlabs-http")
	}
	if v.utterance <= 0 || v.hold <= 0 || v.transcribeDelay < 0 || v.synthDelay < 0 || v.sentences < 0 || v.synthFirstByte < 0 {
		return errors.New("-utterance and -hold must be positive; -transcribe-delay, -synth-delay and -sentences cannot be negative")
	}
	return nil
}

// SpeechSettings are the settings of a voice or idle run.
type SpeechSettings struct {
	// Utterance is the length of each turn's audio; empty for typed turns.
	Utterance string `json:"utterance,omitempty"`
	VoiceText bool   `json:"voice_text,omitempty"`
	Hold      string `json:"hold,omitempty"`
	// With -local: the bench speech, the model's sentences, and the time the bench parts take
	// before a turn's first audio, subtracted for the added time and the engine's share.
	TranscribeDelay string `json:"transcribe_delay,omitempty"`
	SynthDelay      string `json:"synth_delay,omitempty"`
	Sentences       int    `json:"sentences,omitempty"`
	Offset          string `json:"offset,omitempty"`
}

func speechSettings(cfg *config) *SpeechSettings {
	var s SpeechSettings
	switch cfg.mode {
	case "voice":
		if cfg.voiceText {
			s.VoiceText = true
		} else {
			s.Utterance = cfg.utterance.String()
		}
	case "idle":
		s.Hold = cfg.hold.String()
	default:
		return nil
	}
	if cfg.local && cfg.mode == "voice" {
		s.TranscribeDelay, s.SynthDelay, s.Sentences = cfg.transcribeDelay.String(), cfg.synthDelay.String(), cfg.sentences
		s.Offset = voiceOffset(cfg).String()
	}
	return &s
}

// printSpeech writes the speech settings of a run for people.
func printSpeech(w io.Writer, s *SpeechSettings) {
	switch {
	case s == nil:
	case s.Hold != "":
		fmt.Fprintf(w, "idle: each operation holds a socket for %s\n", s.Hold)
	case s.Offset != "":
		fmt.Fprintf(w, "bench speech: transcription %s, synthesis %s per sentence, %d sentences; %s before the first audio is theirs and the model's\n",
			s.TranscribeDelay, s.SynthDelay, max(s.Sentences, 1), s.Offset)
	}
}
