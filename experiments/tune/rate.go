package tune

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rateUnits are the periods a rate may be given per, in seconds: what people write on a
// runbook ("about once a month", "5 a minute").
var rateUnits = []struct {
	names   []string
	seconds float64
}{
	{[]string{"s", "sec", "second"}, 1},
	{[]string{"min", "minute"}, 60},
	{[]string{"h", "hour"}, 3600},
	{[]string{"d", "day"}, 86400},
	{[]string{"week"}, 7 * 86400},
	{[]string{"month"}, SecondsPerYear / 12},
	{[]string{"year", "y"}, SecondsPerYear},
}

// ParseRate parses a rate of events as people write it: a bare number is per second
// (0.1), or a count per period (0.1/s, 5/min, 2/hour, 1/day, 1/week, 1/month, 1/year; a
// month is a twelfth of a year). It returns events per second, finite and not negative.
func ParseRate(s string) (float64, error) {
	num, per, hasPer := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a finite number of events a second (0.1) or per period (5/min, 1/month)")
	}
	if v < 0 {
		return 0, fmt.Errorf("a rate cannot be negative")
	}
	if !hasPer {
		return v, nil
	}
	per = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(per)), "s")
	if per == "" { // "/s" trimmed to nothing
		return v, nil
	}
	for _, u := range rateUnits {
		for _, n := range u.names {
			if per == n || per == strings.TrimSuffix(n, "s") {
				return v / u.seconds, nil
			}
		}
	}
	return 0, fmt.Errorf("unknown period %q: allowed s, min, hour, day, week, month or year (e.g. 1/month)", per)
}
