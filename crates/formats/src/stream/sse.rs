//! Server-sent events framing (the WHATWG `text/event-stream` rules), fed
//! raw bytes at any split.
//!
//! Lines end with LF, CRLF or CR (a CR at the end of one chunk and an LF at
//! the start of the next are one line end). A blank line ends an event;
//! `data:` lines are joined with `\n`; `event:` names the event; comments
//! (`:`) and other fields (`id:`, `retry:`) are ignored; one space after the
//! colon is dropped; a UTF-8 BOM at the very start is skipped. Lines are
//! split only at ASCII CR/LF, which never occur inside a UTF-8 sequence, so
//! a complete line is checked as UTF-8 once, whatever the chunking was.

use capstan_core::error::Error;

/// One event: its `event:` name ("" when none) and its data.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SseEvent {
    pub name: String,
    pub data: String,
}

#[derive(Default)]
pub(crate) struct Framer {
    /// Bytes of the line being received.
    line: Vec<u8>,
    /// The previous chunk ended with CR: an LF starting this one is not a new line end.
    after_cr: bool,
    /// The start of the stream was seen (for the BOM).
    started: bool,
    name: String,
    data: String,
    /// `data` has at least one `data:` line.
    has_data: bool,
    /// Lines read so far, for messages.
    lines: usize,
}

impl Framer {
    /// Bytes held: the partial line and the event being built.
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.len() + self.name.len()
    }

    /// Reads `bytes`; each complete event goes to `on_event` in order. Stops
    /// at the first error `on_event` or the framing returns.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        on_event: &mut dyn FnMut(SseEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.after_cr {
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
            if !bytes.is_empty() {
                self.after_cr = false;
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&bytes[..end]);
            let cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, on_event)?;
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// The body ended: an event whose lines all arrived is delivered even
    /// without its closing blank line; a line cut short is dropped (the
    /// caller learns the stream was cut from the missing end event).
    pub fn end(
        &mut self,
        on_event: &mut dyn FnMut(SseEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.line.clear();
        self.dispatch(on_event)
    }

    fn line_done(
        &mut self,
        line: &[u8],
        on_event: &mut dyn FnMut(SseEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.lines += 1;
        let mut line = line;
        if !self.started {
            self.started = true;
            if let Some(rest) = line.strip_prefix("\u{feff}".as_bytes()) {
                line = rest;
            }
        }
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        let line = std::str::from_utf8(line).map_err(|e| {
            Error::InvalidResponse(format!(
                "stream line {} is not valid UTF-8 (byte {} of the line)",
                self.lines,
                e.valid_up_to()
            ))
        })?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.name.clear();
                self.name.push_str(value);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(
        &mut self,
        on_event: &mut dyn FnMut(SseEvent) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let name = std::mem::take(&mut self.name);
        let data = std::mem::take(&mut self.data);
        if !std::mem::take(&mut self.has_data) {
            return Ok(());
        }
        on_event(SseEvent { name, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut f = Framer::default();
        for c in chunks {
            f.feed(c, &mut |e| {
                out.push(e);
                Ok(())
            })
            .unwrap();
        }
        f.end(&mut |e| {
            out.push(e);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn every_line_end_and_split_gives_the_same_events() {
        let text = "\u{feff}: comment\nevent: a\ndata: x\ndata:y\n\ndata: é\r\n\r\nid: 3\ndata: z\r\rdata: last\n";
        let want = vec![
            SseEvent {
                name: "a".into(),
                data: "x\ny".into(),
            },
            SseEvent {
                name: "".into(),
                data: "é".into(),
            },
            SseEvent {
                name: "".into(),
                data: "z".into(),
            },
            SseEvent {
                name: "".into(),
                data: "last".into(),
            },
        ];
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(
                events(&[&bytes[..cut], &bytes[cut..]]),
                want,
                "cut at {cut}"
            );
        }
        let ones: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(events(&ones), want);
    }

    #[test]
    fn a_line_cut_short_at_the_end_is_dropped() {
        assert_eq!(events(&[b"data: {\"a\":1}\n\ndata: {\"b"]).len(), 1);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_invalid_response() {
        let mut f = Framer::default();
        let err = f.feed(b"data: \xff\n\n", &mut |_| Ok(())).unwrap_err();
        assert!(matches!(err, Error::InvalidResponse(m) if m.contains("UTF-8")));
    }
}
