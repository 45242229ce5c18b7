package jsonstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// readers gives the same text whole and one byte at a time, so every
// buffer boundary falls in every place once.
func readers(text string) map[string]func() io.Reader {
	return map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(text) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(text)) },
	}
}

func TestSkipStepsOverExactlyOneValue(t *testing.T) {
	t.Parallel()
	for _, v := range []string{
		`"plain"`, `"with \"quotes\" and \\ and \u00e9"`, `"ends in a backslash \\"`,
		`{"a": [1, 2, {"b": "}]"}], "c": null}`, `[]`, `{}`, `-12.5e3`, `true`, `null`,
		`[[[[["deep"]]]]]`, `{"k": "` + strings.Repeat(`x\"`, 50000) + `"}`,
	} {
		for name, open := range readers(" " + v + " , 7") {
			d := NewReader(open())
			if err := d.Skip(); err != nil {
				t.Fatalf("%s %.40s: %v", name, v, err)
			}
			if got, want := d.Offset(), int64(len(v)+1); got != want {
				t.Errorf("%s %.40s: offset %d, want %d", name, v, got, want)
			}
			if !d.Eat(',') {
				t.Errorf("%s %.40s: the comma after the value is not next", name, v)
			}
		}
	}
}

func TestTruncatedTextIsASyntaxError(t *testing.T) {
	t.Parallel()
	for _, v := range []string{`"open`, `"open\`, `{"a": [1, 2`, `[`, `{"a"`} {
		d := NewReader(strings.NewReader(v))
		if err := d.Skip(); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v, want a syntax error", v, err)
		}
	}
	for _, v := range []string{`}`, `,`, ``} {
		if err := NewReader(strings.NewReader(v)).Skip(); err == nil {
			t.Errorf("%q: skipped", v)
		}
	}
}

func TestTextUndoesEscapesAsEncodingJSONDoes(t *testing.T) {
	t.Parallel()
	for _, v := range []string{
		`"plain text"`, `"tab\there\nnewline \"q\" \\ \/"`, `"\u00e9\u4e2d \ud83d\ude00"`,
		`"lone \ud83d surrogate"`, `"\u0041\u0042"`, `"` + strings.Repeat(`{\"id\":1},`, 20000) + `"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(v), &want); err != nil {
			t.Fatal(err)
		}
		for name, open := range readers(v + `,`) {
			d := NewReader(open())
			got, err := io.ReadAll(d.Text())
			if err != nil {
				t.Fatalf("%s %.40s: %v", name, v, err)
			}
			if string(got) != want {
				t.Errorf("%s %.40s: %.60q, want %.60q", name, v, got, want)
			}
			if d.Offset() != int64(len(v)) || !d.Eat(',') {
				t.Errorf("%s %.40s: the reader is not just past the string (offset %d)", name, v, d.Offset())
			}
		}
	}
}

func TestTextReadsInvalidInputWithoutFailing(t *testing.T) {
	t.Parallel()
	got, err := io.ReadAll(NewReader(strings.NewReader("\"a\xffb \\uZZ\"")).Text())
	if err != nil || string(got) != "a\xffb \uFFFDZZ" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := io.ReadAll(NewReader(strings.NewReader(`"bad \q"`)).Text()); !errors.Is(err, ErrSyntax) {
		t.Errorf("an invalid escape: %v", err)
	}
	if _, err := io.ReadAll(NewReader(strings.NewReader(`42`)).Text()); !errors.Is(err, ErrSyntax) {
		t.Errorf("a number read as text: %v", err)
	}
}

func TestKeysAndScalars(t *testing.T) {
	t.Parallel()
	d := NewReader(strings.NewReader(`{"short": 1, "` + strings.Repeat("k", 100) + `": true, "esc\"aped": -2.5}`))
	if err := d.Expect('{'); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		key    string
		whole  bool
		scalar string
	}{{"short", true, "1"}, {strings.Repeat("k", 16), false, "true"}, {`esc"aped`, true, "-2.5"}} {
		k, whole, err := d.Key(16)
		if err != nil || k != want.key || whole != want.whole {
			t.Fatalf("key %q %v %v, want %q %v", k, whole, err, want.key, want.whole)
		}
		s, err := d.Scalar(8)
		if err != nil || s != want.scalar {
			t.Fatalf("scalar %q %v", s, err)
		}
		d.Eat(',')
	}
	if !d.Eat('}') {
		t.Error("the object does not end where it should")
	}
}

// A source that fails passes its error on, rather than calling the text
// malformed.
func TestSourceErrorsAreKept(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk gone")
	d := NewReader(io.MultiReader(strings.NewReader(`{"a": "x`), iotest.ErrReader(boom)))
	if err := d.Skip(); !errors.Is(err, boom) {
		t.Errorf("%v, want the source's error", err)
	}
}

func FuzzTextAndSkip(f *testing.F) {
	f.Add([]byte(`{"a": ["b\"", 1, {"c": null}]}`))
	f.Add([]byte(`"\ud83d\ude00\u00e9"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			// Whatever it is, walking it ends.
			_ = NewReader(bytes.NewReader(data)).Skip()
			return
		}
		d := NewReader(iotest.HalfReader(bytes.NewReader(data)))
		if err := d.Skip(); err != nil {
			t.Fatalf("a valid text failed: %v", err)
		}
		d.SkipSpace()
		if d.Offset() != int64(len(data)) {
			t.Fatalf("offset %d after the value, the text has %d", d.Offset(), len(data))
		}
		var s string
		if json.Unmarshal(data, &s) == nil && utf8.Valid(data) { // (invalid UTF-8 is passed on, not replaced)
			got, err := io.ReadAll(NewReader(bytes.NewReader(data)).Text())
			if err != nil || string(got) != s {
				t.Fatalf("text %q %v, want %q", got, err, s)
			}
		}
	})
}
