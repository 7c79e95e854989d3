package capstan

// Readers of the two arrays a host batch lends (the handed-out calls and
// the results), written by capstan (valid JSON, one object per entry): a
// scan of the known keys, with encoding/json only for a string that has
// escapes. encoding/json's reflection took a fifth of a 10,000-call
// batch's CPU (BENCHMARKS.md). Anything unexpected falls back to
// encoding/json, so the scan only has to be right, not complete.

import (
	"encoding/json"
	"errors"
	"time"
)

var errScan = errors.New("unexpected JSON")

type scanner struct {
	b   []byte
	i   int
	err error
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat consumes c (after white space) or records an error.
func (s *scanner) eat(c byte) {
	s.ws()
	if s.err == nil && s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return
	}
	s.err = errScan
}

// peek is the next byte after white space (0 at the end).
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a JSON string (a copy: the text may be C memory).
func (s *scanner) str() string {
	s.eat('"')
	if s.err != nil {
		return ""
	}
	start := s.i
	escaped := false
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			s.i++
			if !escaped {
				return string(s.b[start : s.i-1])
			}
			return s.unescape(s.b[start-1 : s.i])
		case '\\':
			escaped = true
			s.i += 2
		default:
			s.i++
		}
	}
	s.err = errScan
	return ""
}

// unescape decodes a quoted JSON string with escapes: the one-letter
// escapes here (a result's content holding JSON is full of \"),
// encoding/json for \u escapes.
func (s *scanner) unescape(q []byte) string {
	out := make([]byte, 0, len(q))
	for i := 1; i < len(q)-1; i++ {
		c := q[i]
		if c != '\\' {
			if c < 0x20 {
				s.err = errScan
				return ""
			}
			out = append(out, c)
			continue
		}
		i++
		switch q[i] {
		case '"', '\\', '/':
			out = append(out, q[i])
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		default: // \u, or not JSON: encoding/json decides
			var str string
			if err := json.Unmarshal(q, &str); err != nil {
				s.err = err
			}
			return str
		}
	}
	return string(out)
}

// int reads a non-negative integer.
func (s *scanner) int() int64 {
	s.ws()
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && s.i-start < 18 {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.err = errScan
	}
	return n
}

// raw reads any JSON value and returns a copy of its text.
func (s *scanner) raw() json.RawMessage {
	s.ws()
	start, depth := s.i, 0
	for s.err == nil && s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			s.str()
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				s.err = errScan
				return nil
			}
			depth--
			s.i++
		case ',', ':':
			if depth == 0 {
				s.err = errScan
				return nil
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && (s.i >= len(s.b) || s.b[s.i] == ',' || s.b[s.i] == '}' || s.b[s.i] == ']' || s.b[s.i] == ' ' || s.b[s.i] == '\n') {
			break
		}
	}
	if s.err != nil || depth != 0 || s.i == start {
		s.err = errScan
		return nil
	}
	return append(json.RawMessage(nil), s.b[start:s.i]...)
}

// objects reads a JSON array of objects: begin at each object's start,
// entry for each key, with the scanner on its value (which entry reads).
func (s *scanner) objects(begin func(), entry func(key string)) {
	s.eat('[')
	if s.peek() == ']' {
		s.i++
	} else {
		s.elements(begin, entry)
	}
	if s.ws(); s.err == nil && s.i != len(s.b) {
		s.err = errScan
	}
}

func (s *scanner) elements(begin func(), entry func(key string)) {
	for s.err == nil {
		s.eat('{')
		begin()
		if s.peek() != '}' {
			for s.err == nil {
				key := s.str()
				s.eat(':')
				entry(key)
				if s.peek() != ',' {
					break
				}
				s.i++
			}
		}
		s.eat('}')
		if s.peek() != ',' {
			break
		}
		s.i++
	}
	s.eat(']')
}

// guard runs f, a panic in it (text the scan misreads) an error: the
// caller then falls back to encoding/json.
func (s *scanner) guard(f func()) {
	defer func() {
		if recover() != nil {
			s.err = errScan
		}
	}()
	f()
}

// scanHanded reads `[{"index","id","name","arguments"}]`.
func scanHanded(text []byte) ([]handedCall, error) {
	s := scanner{b: text}
	var out []handedCall
	var c *handedCall
	s.guard(func() {
		s.objects(func() {
			out = append(out, handedCall{})
			c = &out[len(out)-1]
		}, func(key string) {
			switch key {
			case "index":
				c.Index = int(s.int())
			case "id":
				c.ID = s.str()
			case "name":
				c.Name = s.str()
			case "arguments":
				c.Arguments = s.raw()
			default:
				s.raw()
			}
		})
	})
	if s.err != nil {
		out = nil
		if err := json.Unmarshal(text, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanResults reads capstan's results array into n Results, in order.
func scanResults(text []byte, n int) ([]Result, error) {
	s := scanner{b: text}
	res := make([]Result, 0, n)
	var r *Result
	s.guard(func() {
		s.objects(func() {
			res = append(res, Result{Index: len(res)})
			r = &res[len(res)-1]
		}, func(key string) {
			switch key {
			case "id":
				r.ID = s.str()
			case "name":
				r.Name = s.str()
			case "content":
				r.Content = s.str()
			case "outcome":
				name := s.str()
				r.Outcome = Outcome(len(outcomeNames))
				for i, o := range outcomeNames {
					if o == name {
						r.Outcome = Outcome(i)
					}
				}
				if r.Outcome == Outcome(len(outcomeNames)) {
					s.err = errScan
				}
			case "duration_us":
				r.Duration = time.Duration(s.int()) * time.Microsecond
			case "parts":
				r.Parts = s.raw()
			case "structured_content":
				r.Structured = s.raw()
			default:
				s.raw()
			}
		})
	})
	if s.err == nil && len(res) == n {
		return res, nil
	}
	return parseResults(text, n)
}
