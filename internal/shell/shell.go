// Package shell quotes words for a POSIX shell, so that every command line the tool
// prints for the user to run again (a resume, a tune's confirmation run) reads back as
// the words it was made of.
package shell

import "strings"

// Quote returns s as one shell word: as it is when it holds only characters no shell
// reads specially, else in single quotes (a single quote inside closes the quoting, is
// escaped, and reopens it).
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
