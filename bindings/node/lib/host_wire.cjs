'use strict';
// host_wire.cjs: a host batch's handed-out calls and results read without
// building JSON.parse's objects for what the binding does not need, for the
// one shape capstan writes them in; any other shape gives null, and the
// caller parses the text with JSON.parse instead.
//
// Inside a JSON string every quote is escaped, so in an entry of a known
// key order the first `","next":` after a string's opening quote is that
// string's end whenever what lies between is one JSON string's text, which
// jsonString checks (a raw quote or a bad escape: not this shape).

// The JSON string whose text lies between `from` (after its opening quote)
// and `to` (its closing quote), unescaped; undefined when it is not one.
function jsonString(text, from, to) {
  const s = text.slice(from, to);
  if (!s.includes('\\') && !s.includes('"')) return s;
  try {
    return JSON.parse(text.slice(from - 1, to + 1));
  } catch {
    return undefined;
  }
}

// The digits at `p` as a number, and where they end; -1 when there are none.
function digitsAt(text, p) {
  let ch = text.charCodeAt(p);
  if (!(ch >= 48 && ch <= 57)) return -1;
  let n = 0;
  do {
    n = n * 10 + ch - 48;
    ch = text.charCodeAt(++p);
  } while (ch >= 48 && ch <= 57);
  digitsAt.end = p;
  return n;
}

const ENTRY_END = '}},{"index":';

/**
 * capstan_host_batch_begin's calls, `[{"index":N,"id":"..","name":"..",
 * "arguments":{..}}, ...]`, as JSON.parse gives them, each call's
 * arguments parsed on their own (JSON.parse builds no object for the
 * array, the calls, their ids and names), or null. An object's text ends
 * where its braces balance, so no shorter text that begins with its `{` is
 * JSON: the arguments end at the first `}},{"index":` (or the array's end)
 * before which JSON.parse takes them.
 */
function scanHanded(text) {
  const out = [];
  if (text === '[]') return out;
  if (text.charCodeAt(0) !== 91) return null;
  let p = 1;
  for (;;) {
    if (!text.startsWith('{"index":', p)) return null;
    const index = digitsAt(text, p + 9);
    if (index < 0) return null;
    p = digitsAt.end;
    if (!text.startsWith(',"id":"', p)) return null;
    const idEnd = text.indexOf('","name":"', p + 7);
    if (idEnd < 0) return null;
    const id = jsonString(text, p + 7, idEnd);
    if (id === undefined) return null;
    p = idEnd + 10;
    const nameEnd = text.indexOf('","arguments":{', p);
    if (nameEnd < 0) return null;
    const name = jsonString(text, p, nameEnd);
    if (name === undefined) return null;
    p = nameEnd + 14; // the arguments' {
    let args;
    for (let e = text.indexOf(ENTRY_END, p); ; e = text.indexOf(ENTRY_END, e + 1)) {
      const end = e < 0 ? text.length - 2 : e + 1;
      try {
        args = JSON.parse(text.slice(p, end));
      } catch {
        if (e < 0) return null;
        continue;
      }
      p = end;
      break;
    }
    out.push({ index, id, name, arguments: args });
    if (text.charCodeAt(p) !== 125) return null;
    const ch = text.charCodeAt(p + 1);
    if (ch === 93) return p + 2 === text.length ? out : null;
    if (ch !== 44) return null;
    p += 2;
  }
}

/**
 * capstan_host_batch_finish's results, for a batch whose every call was
 * handed out (`handed`, in call order), as the binding's results, or null.
 * Each entry is `{"id":..,"name":..,"content":"..","is_error":B,
 * "outcome":"..","duration_us":N}` in this order; its id and name are its
 * handed-out call's. Parts or structured content: null.
 */
function scanResults(text, handed) {
  const n = handed.length;
  const out = new Array(n);
  let p = 1;
  for (let i = 0; i < n; i++) {
    const c = handed[i];
    if (c.index !== i || !text.startsWith('{"id":', p)) return null;
    const a = text.indexOf(',"content":"', p + 6);
    if (a < 0) return null;
    const q = text.indexOf('","is_error":', a + 12);
    if (q < 0) return null;
    const content = jsonString(text, a + 12, q);
    if (content === undefined) return null;
    p = q + 13;
    let isError;
    if (text.startsWith('false,"outcome":"', p)) {
      isError = false;
      p += 17;
    } else if (text.startsWith('true,"outcome":"', p)) {
      isError = true;
      p += 16;
    } else {
      return null;
    }
    const e = text.indexOf('"', p);
    if (e < 0) return null;
    const outcome = text.slice(p, e);
    if (!text.startsWith(',"duration_us":', e + 1)) return null;
    const durationUs = digitsAt(text, e + 16);
    if (durationUs < 0) return null;
    p = digitsAt.end;
    // The entry ends here, then the next one or the array.
    if (text.charCodeAt(p) !== 125 || text.charCodeAt(p + 1) !== (i === n - 1 ? 93 : 44)) return null;
    p += 2;
    out[i] = { index: i, id: c.id, name: c.name, content, isError, outcome, durationUs };
  }
  return p === text.length ? out : null;
}

module.exports = { scanHanded, scanResults };
