package telephony

import (
	"slices"
	"time"
)

// Figures are what one call measured, for the operator: logged when it ends, and given to
// the host's hook.
type Figures struct {
	// FirstAudio is, for each answered utterance, the time from the end of the caller's speech
	// (as the engine's detector heard it) to the first audio of the answer sent down the line.
	FirstAudio []time.Duration
	// MarkDelays is, for each mark the line echoed, how long after the audio before it should
	// have finished playing the echo came: the line's round trip and its buffering.
	MarkDelays []time.Duration
	// Jitter is the interarrival jitter of the caller's audio (RFC 3550, section 6.4.1).
	Jitter time.Duration
	// Turns, BargeIns: the turns the call ran, and the answers the caller spoke over.
	Turns, BargeIns int
	// HeardWhileSpoken is the turns whose utterance a streaming recogniser heard as the caller
	// spoke it ([engine.StreamingTranscriber]).
	HeardWhileSpoken int
	// Verified says that the tenant's backend named the caller.
	Verified bool
	Duration time.Duration
	// Media is what the line's RTP told of the call (SIP); nil on a line that has none
	// (Twilio's media stream).
	Media *MediaFigures
}

// MediaFigures are an RTP line's figures (RFC 3550, section 6.4): the caller's packets, as their
// sequence numbers tell, and the engine's, as the caller's RTCP reports tell.
type MediaFigures struct {
	// Received is the caller's packets that arrived; ReceivedLost those its sequence numbers
	// say were lost on the way.
	Received, ReceivedLost int64
	// Sent is the packets of the engine's audio; SentLost the number the caller's last RTCP
	// report counted lost, SentJitter the interarrival jitter it measured, Reports how many
	// reports came (none: the two are unknown, not zero).
	Sent, SentLost int64
	SentJitter     time.Duration
	Reports        int
}

// A MediaLine is a [Line] that carries RTP: its call's [Figures] hold its MediaFigures, asked
// once the call ended.
type MediaLine interface {
	Line
	MediaFigures() MediaFigures
}

// Percentile is the p-th percentile (0 to 100) of ds by the nearest rank, 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(len(s)-1, max(0, i))]
}

// Jitter estimates the interarrival jitter of a stream of media frames, as RFC 3550 does for
// RTP: each frame's transit time (its arrival less its media time) is compared with the
// previous frame's, and the estimate moves a sixteenth of the way to the difference. It is not
// safe for concurrent use.
type Jitter struct {
	started bool
	transit time.Duration
	j       float64
}

// Arrive counts a frame that arrived at at, media time mediaTime into the stream.
func (j *Jitter) Arrive(at time.Time, mediaTime time.Duration) {
	transit := time.Duration(at.UnixNano()) - mediaTime
	if j.started {
		d := float64(transit - j.transit)
		if d < 0 {
			d = -d
		}
		j.j += (d - j.j) / 16
	}
	j.started, j.transit = true, transit
}

// Value is the estimate so far.
func (j *Jitter) Value() time.Duration { return time.Duration(j.j) }
