package jsonscan

// Cursor walks JSON text without decoding it: it skips white space,
// strings and whole values and iterates over the members of an object and
// the elements of an array. validate and its adapters use it: the
// validators' byte walkers and the adapters' bounded pre-passes use it.
//
// Contract: Data must already be well formed (accepted by the strict
// reader). The cursor does not validate: on other input no method panics
// or reads outside Data, but what it skips and returns is unspecified and
// Pos may end past len(Data).
// Pos is the offset of the next byte to read; set it to start elsewhere,
// read it to slice the raw text of what a method skipped
// (Data[start:Pos]).
//
// Cost: no method allocates; each reads every byte it skips once. Every
// slice it returns aliases Data (for a request body: valid only as long
// as the body is).
type Cursor struct {
	Data []byte
	Pos  int
}

// Peek returns the byte at Pos, or 0 at the end of Data (0 never occurs
// outside a string in well-formed JSON).
func (c *Cursor) Peek() byte {
	if c.Pos < len(c.Data) {
		return c.Data[c.Pos]
	}
	return 0
}

// SkipSpace moves Pos past JSON white space (space, tab, CR, LF).
func (c *Cursor) SkipSpace() { c.Pos = Space(c.Data, c.Pos) }

// SkipString skips the string whose opening quote is at Pos and returns
// its raw text, both quotes included (the escapes left as written), and
// whether it has an escape (when it has none, raw[1:len(raw)-1] is the
// decoded string).
func (c *Cursor) SkipString() (raw []byte, esc bool) {
	start := c.Pos
	c.Pos++
	for c.Pos < len(c.Data) {
		switch c.Data[c.Pos] {
		case '\\':
			esc = true
			c.Pos += 2
			continue
		case '"':
			c.Pos++
			return c.Data[start:c.Pos], esc
		}
		c.Pos++
	}
	return c.Data[start:], esc
}

// SkipValue skips the white space at Pos and then one value (string,
// object or array with everything nested in it, number, true, false or
// null), leaving Pos just after it.
func (c *Cursor) SkipValue() {
	c.SkipSpace()
	switch c.Peek() {
	case '"':
		c.SkipString()
	case '{', '[':
		// locals, not c.Pos: this loop runs over most of an attack body
		d, depth := c.Data, 0
		for i := c.Pos; i < len(d); i++ {
			switch d[i] {
			case '"':
				for i++; i < len(d) && d[i] != '"'; i++ {
					if d[i] == '\\' {
						i++
					}
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					c.Pos = i + 1
					return
				}
			}
		}
		c.Pos = len(d)
	default: // number, true, false, null
		for c.Pos < len(c.Data) {
			switch c.Data[c.Pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			c.Pos++
		}
	}
}

// Members iterates over the object whose '{' is at Pos: for each member
// it calls fn with the key's raw text and escape flag (as SkipString
// returns them) and Pos at the start of the member's value, which fn must
// skip (SkipValue, or a walk that ends after it). When fn returns false
// Members returns at once, Pos where fn left it; else it returns with Pos
// after the closing '}'.
func (c *Cursor) Members(fn func(raw []byte, esc bool) bool) {
	c.Pos++ // '{'
	for {
		c.SkipSpace()
		if c.Peek() != '"' {
			c.Pos++ // '}'
			return
		}
		raw, esc := c.SkipString()
		c.SkipSpace()
		c.Pos++ // ':'
		c.SkipSpace()
		if !fn(raw, esc) {
			return
		}
		c.SkipSpace()
		if c.Peek() == ',' {
			c.Pos++
		}
	}
}

// Elements iterates over the array whose '[' is at Pos: for each element
// it calls fn with Pos at the element, which fn must skip. When fn
// returns false Elements returns at once, Pos where fn left it; else it
// returns with Pos after the closing ']'.
func (c *Cursor) Elements(fn func() bool) {
	c.Pos++ // '['
	for {
		c.SkipSpace()
		if c.Peek() == ']' || c.Pos >= len(c.Data) {
			c.Pos++
			return
		}
		if !fn() {
			return
		}
		c.SkipSpace()
		if c.Peek() == ',' {
			c.Pos++
		}
	}
}
