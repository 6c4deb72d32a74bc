package timing

import (
	"fmt"
	"strings"
)

// orList quotes names and joins them for a message: "a", "a or b", "a, b or c".
func orList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	if len(quoted) <= 1 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// EditDistance is the Levenshtein distance between a and b, counted in bytes (zone, day and
// field names are ASCII). It ranks the "did you mean" hints of admission errors.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// leadingDigits counts the ASCII digits at the start of s, up to limit. (strconv would also
// accept signs and, for some functions, underscores; formats here allow digits only.)
func leadingDigits(s string, limit int) int {
	n := 0
	for n < len(s) && n < limit && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// atoi converts a string of ASCII digits, already checked by leadingDigits.
func atoi(digits string) int {
	n := 0
	for _, c := range []byte(digits) {
		n = n*10 + int(c-'0')
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
