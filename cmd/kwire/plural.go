package main

import "strconv"

// plural is "1 frame", "2 frames": n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// failedError says how many frames (or lines) did not decode; errors.Is matches it
// to errFrames (exit code 1).
type failedError struct{ msg string }

// Error is "3 frames did not decode", with what the first of them looks like when
// that is known.
func (e *failedError) Error() string { return e.msg }

// Is reports whether target is errFrames.
func (e *failedError) Is(target error) bool { return target == errFrames }
