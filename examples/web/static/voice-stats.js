// What live voice did, when: read by the browser tests (window.__voiceStats) and shown to the
// curious; the figures of time to first audio and barge-in come from here.

/**
 * stats is what the live voice did, for the browser tests and the curious (window.__voiceStats).
 * Times are performance.now() milliseconds. The top-level times are those of the latest turn
 * and barge-in; turns and bargeIns keep each one.
 */
export const stats = {
  endOfSpeechSent: null,
  firstAudioReceived: null,
  firstAudioPlaying: null,
  specReceived: null,
  cancelSent: null,
  playbackStopped: null,
  /** per turn: endOfSpeechSent, transcriptReceived, transcript, firstAudioReceived, firstAudioPlaying, specReceived, doneReceived, cancelled, audioMessages */
  turns: [],
  /** per barge-in: cancelSent, stopCalled, sources (how many were stopped), playbackStopped, activeAfter */
  bargeIns: [],
  /** socket closes: {code, reason, at} */
  closes: [],
  counters: {
    ticketsMinted: 0,
    socketsOpened: 0,
    socketFailures: 0,
    framesCaptured: 0,
    framesSent: 0,
    speechStarts: 0,
    endOfSpeech: 0,
    transcripts: 0,
    speakDeltas: 0,
    audioMessages: 0,
    chunksScheduled: 0,
    chunksStopped: 0,
    specs: 0,
    dones: 0,
    errors: 0,
    cancelsSent: 0,
    cancelledReceived: 0,
    dropped: 0,
  },
};
