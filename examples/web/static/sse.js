// A server-sent events parser for streams read with fetch, following the WHATWG HTML
// "event stream interpretation" rules: lines end in CRLF, LF or CR (also when a CRLF pair is
// split across chunks); a leading BOM is dropped; lines starting with ":" are comments; a field
// name runs to the first ":", and one space after it is dropped; "data" lines accumulate with
// "\n" between them; a blank line dispatches the event; an event with no data is not
// dispatched; "id" sets the last event id unless it holds U+0000; "retry" takes digits only;
// unknown fields are ignored; an event left unterminated at the end of the stream is dropped.

/**
 * createParser returns a parser. Feed it decoded text with feed(text) as it arrives; it calls
 * onEvent({event, data, id}) for every dispatched event and onComment(text) for every comment
 * line. end() finishes the stream, discarding an unterminated event.
 */
export function createParser({ onEvent, onComment = () => {}, onRetry = () => {} }) {
  let buffer = "";
  let first = true; // a BOM may only start the stream
  let skipLF = false; // the previous chunk ended in CR: a leading LF belongs to it
  let data = "";
  let hasData = false;
  let eventType = "";
  let lastEventId = "";

  function line(text) {
    if (text === "") {
      if (hasData) {
        onEvent({ event: eventType || "message", data, id: lastEventId });
      }
      data = "";
      hasData = false;
      eventType = "";
      return;
    }
    if (text.charCodeAt(0) === 0x3a) { // ":"
      onComment(text.slice(1).replace(/^ /, ""));
      return;
    }
    const colon = text.indexOf(":");
    let field = text;
    let value = "";
    if (colon >= 0) {
      field = text.slice(0, colon);
      value = text.slice(colon + 1);
      if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    }
    switch (field) {
      case "event":
        eventType = value;
        break;
      case "data":
        data = hasData ? data + "\n" + value : value;
        hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) lastEventId = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) onRetry(Number(value));
        break;
      default: // unknown fields are ignored
    }
  }

  return {
    feed(chunk) {
      if (chunk === "") return;
      if (first) {
        first = false;
        if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      }
      if (skipLF && chunk.charCodeAt(0) === 0x0a) chunk = chunk.slice(1);
      skipLF = false;
      buffer += chunk;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c !== 0x0a && c !== 0x0d) continue;
        line(buffer.slice(start, i));
        if (c === 0x0d) {
          if (i + 1 === buffer.length) {
            skipLF = true; // the LF of this CRLF may come in the next chunk
          } else if (buffer.charCodeAt(i + 1) === 0x0a) {
            i++;
          }
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
    },
    end() {
      buffer = "";
      data = "";
      hasData = false;
      eventType = "";
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}

/**
 * readEvents yields the events of a fetch Response body as {event, data, id}, decoding UTF-8
 * as it streams. Comments (keep-alive pings) are passed to onComment. Cancelling the
 * iteration (break, or an aborted signal) cancels the body.
 */
export async function* readEvents(response, { onComment } = {}) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder("utf-8");
  const queue = [];
  const parser = createParser({ onEvent: (ev) => queue.push(ev), onComment });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        parser.feed(decoder.decode());
        parser.end();
        yield* queue.splice(0);
        return;
      }
      parser.feed(decoder.decode(value, { stream: true }));
      yield* queue.splice(0);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
