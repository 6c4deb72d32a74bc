package timing

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultZone is the zone of a schedule whose timeZone is omitted. Callers apply it before
// calling NormalizeZone, so that the stored object names its zone explicitly.
const DefaultZone = "UTC"

// Zone is a normalized time zone.
type Zone struct {
	// Name is the canonical name to store, e.g. "Asia/Tokyo", "UTC" or "Etc/GMT-9".
	Name string
	// Location is the loaded zone.
	Location *time.Location
	// Warning is non-empty for names that the tz database accepts but that users rarely
	// mean, such as EST (a fixed offset that ignores daylight saving time). It says what the
	// name is and which zone was probably meant; webhooks return it as an admission warning.
	Warning string
}

// NormalizeZone validates a user-supplied time zone and returns its canonical form:
//
//   - IANA names in any letter case get their canonical spelling (asia/tokyo → Asia/Tokyo);
//   - UTC and its aliases (Z, Zulu, UCT, Universal, GMT, Greenwich, Etc/UTC, Etc/GMT, GMT0,
//     ...) become "UTC";
//   - whole-hour offsets (+09:00, +0900, +9, UTC+9, GMT+09:00, -05:00) become the matching
//     fixed zone, Etc/GMT-9 or Etc/GMT+5 (the tz database inverts the sign: Etc/GMT-9 is
//     nine hours ahead of UTC); names that already start with Etc/ are taken as they are;
//   - legacy names such as EST or PST8PDT are accepted with a Warning.
//
// It rejects the empty string, "Local" (the machine's zone), TZ= and CRON_TZ= prefixes,
// offsets that are not whole hours (naming the zone probably meant) and unknown names (with
// up to three close suggestions). Surrounding white space is ignored.
func NormalizeZone(s string) (Zone, error) {
	name, err := canonicalZoneName(strings.TrimSpace(s))
	if err != nil {
		return Zone{}, err
	}
	loc, err := loadZone(name)
	if err != nil {
		return Zone{}, err
	}
	return Zone{Name: name, Location: loc, Warning: legacyZones[name]}, nil
}

// compileZone reads a spec's timeZone field as Window and JobSchedule compile it:
// DefaultZone when omitted; when invalid, the error for the field and UTC, so that the
// spec's other fields are still checked.
func compileZone(timeZone string) (Zone, *FieldError) {
	input := timeZone
	if input == "" {
		input = DefaultZone
	}
	zone, err := NormalizeZone(input)
	if err != nil {
		return Zone{Name: DefaultZone, Location: time.UTC}, &FieldError{Field: FieldTimeZone, Value: timeZone, Detail: err.Error()}
	}
	return zone, nil
}

func canonicalZoneName(s string) (string, error) {
	if s == "" {
		return "", errors.New(`a time zone is required: expected an IANA name such as "Europe/Berlin", or "UTC"`)
	}
	lower := strings.ToLower(s)
	for _, prefix := range []string{"tz=", "cron_tz="} {
		if strings.HasPrefix(lower, prefix) {
			rest := strings.TrimSpace(s[len(prefix):])
			if rest == "" {
				return "", fmt.Errorf(`%q is a %q prefix without a zone: write an IANA zone name alone, such as "Europe/Berlin", or "UTC"`, s, s[:len(prefix)])
			}
			return "", fmt.Errorf("%q has a %q prefix: write the zone name alone, e.g. %q", s, s[:len(prefix)], rest)
		}
	}
	if lower == "local" {
		return "", fmt.Errorf(`%q means the zone of the machine that evaluates the schedule, which differs between machines: use an IANA name such as "Europe/Berlin", or "UTC"`, s)
	}
	if utcAliases[lower] {
		return DefaultZone, nil
	}
	if name, ok := zonesByLowerName[lower]; ok {
		return name, nil
	}
	if name, ok, err := offsetZone(s); ok {
		return name, err
	}
	return "", unknownZoneError(s)
}

// utcAliases holds, in lower case, every spelling of UTC and of zero-offset GMT.
var utcAliases = map[string]bool{
	"utc": true, "z": true, "zulu": true, "uct": true, "universal": true,
	"gmt": true, "gmt0": true, "gmt+0": true, "gmt-0": true, "greenwich": true,
	"etc/utc": true, "etc/zulu": true, "etc/uct": true, "etc/universal": true,
	"etc/gmt": true, "etc/gmt0": true, "etc/gmt+0": true, "etc/gmt-0": true, "etc/greenwich": true,
}

// zonesByLowerName maps every zone name in lower case to its canonical spelling.
var zonesByLowerName = func() map[string]string {
	m := make(map[string]string, len(zoneNames))
	for _, n := range zoneNames {
		m[strings.ToLower(n)] = n
	}
	return m
}()

// legacyZones are names the tz database keeps for compatibility; each warning says what the
// name means and which zone was probably meant.
var legacyZones = map[string]string{
	"EST":     "EST is a fixed UTC-05:00 offset without daylight saving time; for US Eastern time use America/New_York",
	"MST":     "MST is a fixed UTC-07:00 offset without daylight saving time; for US Mountain time use America/Denver (or America/Phoenix, which stays on UTC-07:00 all year)",
	"HST":     "HST is a fixed UTC-10:00 offset; for Hawaii use Pacific/Honolulu",
	"EST5EDT": "EST5EDT is a legacy POSIX-style name for US Eastern time (UTC-05:00, UTC-04:00 in summer); use America/New_York",
	"CST6CDT": "CST6CDT is a legacy POSIX-style name for US Central time (UTC-06:00, UTC-05:00 in summer); use America/Chicago",
	"MST7MDT": "MST7MDT is a legacy POSIX-style name for US Mountain time (UTC-07:00, UTC-06:00 in summer); use America/Denver",
	"PST8PDT": "PST8PDT is a legacy POSIX-style name for US Pacific time (UTC-08:00, UTC-07:00 in summer); use America/Los_Angeles",
	"CET":     "CET is a legacy name for Central European time rules (UTC+01:00, UTC+02:00 in summer); use the zone of the place, e.g. Europe/Berlin or Europe/Paris",
	"MET":     "MET is a legacy name for Central European time rules (UTC+01:00, UTC+02:00 in summer); use the zone of the place, e.g. Europe/Berlin or Europe/Paris",
	"EET":     "EET is a legacy name for Eastern European time rules (UTC+02:00, UTC+03:00 in summer); use the zone of the place, e.g. Europe/Athens or Europe/Helsinki",
	"WET":     "WET is a legacy name for Western European time rules (UTC+00:00, UTC+01:00 in summer); use the zone of the place, e.g. Europe/Lisbon",
}

// zonesForOffset names the zone probably meant by a fixed offset that is not a whole number
// of hours (only whole hours have Etc/GMT±N zones).
var zonesForOffset = map[string]string{
	"+05:30": "Asia/Kolkata",
	"+05:45": "Asia/Kathmandu",
	"+09:30": "Australia/Darwin",
	"-03:30": "America/St_Johns",
	"-02:30": "America/St_Johns",
	"+03:30": "Asia/Tehran",
	"+04:30": "Asia/Kabul",
	"+06:30": "Asia/Yangon",
	"+08:45": "Australia/Eucla",
	"+10:30": "Australia/Lord_Howe",
	"+12:45": "Pacific/Chatham",
	"+13:45": "Pacific/Chatham",
	"-09:30": "Pacific/Marquesas",
}

// offsetZone recognizes a fixed UTC offset: an optional UTC or GMT prefix, a sign, one or
// two hour digits and optional minutes (":mm", or "mm" after two hour digits). ok is false
// when s is not of that form; otherwise err says why the offset cannot be used.
func offsetZone(s string) (name string, ok bool, err error) {
	rest := s
	if len(rest) >= 3 && (strings.EqualFold(rest[:3], "UTC") || strings.EqualFold(rest[:3], "GMT")) {
		rest = rest[3:]
	}
	if rest == "" || (rest[0] != '+' && rest[0] != '-') {
		return "", false, nil
	}
	sign := rest[0]
	rest = rest[1:]

	hourDigits := leadingDigits(rest, 2)
	if hourDigits == 0 {
		return "", false, nil
	}
	hours := atoi(rest[:hourDigits])
	rest = rest[hourDigits:]
	minutes := 0
	switch {
	case rest == "":
	case rest[0] == ':' && len(rest) == 3 && leadingDigits(rest[1:], 2) == 2:
		minutes = atoi(rest[1:])
	case hourDigits == 2 && len(rest) == 2 && leadingDigits(rest, 2) == 2:
		minutes = atoi(rest)
	default:
		return "", false, nil
	}

	canonical := fmt.Sprintf("%c%02d:%02d", sign, hours, minutes)
	if minutes > 59 {
		return "", true, fmt.Errorf("%q is not a valid UTC offset: minutes go from 00 to 59", s)
	}
	if minutes != 0 {
		hint := "use the IANA zone of the place instead (Area/City)"
		if zone, ok := zonesForOffset[canonical]; ok {
			hint = fmt.Sprintf("use the IANA zone of the place instead, e.g. %q for %s", zone, canonical)
		}
		return "", true, fmt.Errorf("%q is not a whole-hour offset: only whole-hour offsets have a fixed zone (Etc/GMT±N); %s", s, hint)
	}
	if hours == 0 {
		return DefaultZone, true, nil
	}
	// The tz database offers Etc/GMT-14 (UTC+14:00) to Etc/GMT+12 (UTC-12:00).
	if (sign == '+' && hours > 14) || (sign == '-' && hours > 12) {
		return "", true, fmt.Errorf("%q is not a UTC offset in use: offsets go from -12:00 to +14:00", s)
	}
	// POSIX inverts the sign: Etc/GMT-9 is nine hours ahead of UTC.
	inverted := byte('-')
	if sign == '-' {
		inverted = '+'
	}
	return fmt.Sprintf("Etc/GMT%c%d", inverted, hours), true, nil
}

// zoneAbbreviations maps common abbreviations, which are not zone names, to the zones they
// most often stand for; they lead the suggestions for an unknown name.
var zoneAbbreviations = map[string][]string{
	"pst":  {"America/Los_Angeles"},
	"pdt":  {"America/Los_Angeles"},
	"mdt":  {"America/Denver"},
	"cst":  {"America/Chicago", "Asia/Shanghai"},
	"cdt":  {"America/Chicago"},
	"edt":  {"America/New_York"},
	"akst": {"America/Anchorage"},
	"akdt": {"America/Anchorage"},
	"brt":  {"America/Sao_Paulo"},
	"bst":  {"Europe/London"},
	"ist":  {"Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"},
	"cest": {"Europe/Berlin", "Europe/Paris"},
	"eest": {"Europe/Athens", "Europe/Helsinki"},
	"west": {"Europe/Lisbon"},
	"msk":  {"Europe/Moscow"},
	"jst":  {"Asia/Tokyo"},
	"kst":  {"Asia/Seoul"},
	"hkt":  {"Asia/Hong_Kong"},
	"sgt":  {"Asia/Singapore"},
	"aest": {"Australia/Sydney", "Australia/Brisbane"},
	"aedt": {"Australia/Sydney"},
	"acst": {"Australia/Adelaide", "Australia/Darwin"},
	"acdt": {"Australia/Adelaide"},
	"awst": {"Australia/Perth"},
	"nzst": {"Pacific/Auckland"},
	"nzdt": {"Pacific/Auckland"},
}

const (
	// maxSuggestions bounds the names offered for an unknown zone.
	maxSuggestions = 3
	// maxZoneNameLength is well above the longest zone name (America/Argentina/ComodRivadavia).
	maxZoneNameLength = 64
)

func unknownZoneError(s string) error {
	suggestions := suggestZones(s)
	if len(suggestions) == 0 {
		return fmt.Errorf(`%q is not a known IANA time zone: expected a name such as "Europe/Berlin", "America/New_York" or "UTC", or a whole-hour offset such as "+09:00"`, s)
	}
	return fmt.Errorf("%q is not a known IANA time zone: did you mean %s?", s, orList(suggestions))
}

// suggestZones returns up to maxSuggestions zone names close to s: zones an abbreviation
// stands for, then zones whose last element equals s (Tokyo → Asia/Tokyo), then the names
// nearest in edit distance to s or whose last element is near s (Asia/Tokio → Asia/Tokyo).
func suggestZones(s string) []string {
	key := zoneKey(s)
	if len(key) > maxZoneNameLength {
		return nil // nothing is close, and edit distances would cost len(key) per byte of every name
	}
	suggestions := slices.Clone(zoneAbbreviations[key])

	type candidate struct {
		name     string
		distance int
	}
	var near []candidate
	// Short inputs are mostly abbreviations: one edit away from them is noise.
	limit := 0
	if len(key) >= 5 {
		limit = min(3, max(1, len(key)/5))
	}
	for _, name := range zoneNames {
		full := zoneKey(name)
		last := full[strings.LastIndexByte(full, '/')+1:]
		if last == key {
			suggestions = append(suggestions, name)
			continue
		}
		if _, legacy := legacyZones[name]; legacy {
			continue // suggest the zones users mean, not the names they trip over
		}
		// Lengths further apart than the limit cannot be within it; skip the computation.
		d := limit + 1
		if abs(len(key)-len(full)) <= limit {
			d = EditDistance(key, full)
		}
		if abs(len(key)-len(last)) <= limit {
			d = min(d, EditDistance(key, last))
		}
		if d <= limit {
			near = append(near, candidate{name, d})
		}
	}
	slices.SortStableFunc(near, func(a, b candidate) int { return a.distance - b.distance })
	for _, c := range near {
		suggestions = append(suggestions, c.name)
	}

	var out []string
	for _, name := range suggestions {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
		if len(out) == maxSuggestions {
			break
		}
	}
	return out
}

// zoneKey folds the differences users make when typing a zone name: case, and spaces
// instead of underscores ("new york").
func zoneKey(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), " ", "_")
}

var locationCache sync.Map // canonical name → *time.Location

// loadZone loads a canonical zone name from the tz database that the engine embeds
// (zz_generated_tzdata.go, release TZDataVersion), and nothing else: not time.LoadLocation,
// which reads the ZONEINFO environment variable and the host's zoneinfo directories before the
// copy that time/tzdata embeds, so that `almanac validate` and `preview` on a host with
// another tz release (or a ZONEINFO of its own) would answer otherwise than the manager in
// its image. Loaded zones are kept: reconcilers load zones often.
func loadZone(name string) (*time.Location, error) {
	if loc, ok := locationCache.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := loadEmbeddedZone(name)
	if err != nil {
		return nil, err
	}
	locationCache.Store(name, loc)
	return loc, nil
}

// loadEmbeddedZone reads a zone from the embedded tz database.
func loadEmbeddedZone(name string) (*time.Location, error) {
	if name == "UTC" {
		return time.UTC, nil // as time.LoadLocation returns it: UTC is the same in every release
	}
	key := name
	if target, ok := zoneLinks[name]; ok {
		key = target
	}
	data, ok := zoneTZif[key]
	if !ok {
		return nil, fmt.Errorf("time zone %q is not in the tz database (release %s) that almanac embeds", name, TZDataVersion)
	}
	loc, err := time.LoadLocationFromTZData(name, []byte(data))
	if err != nil {
		return nil, fmt.Errorf("time zone %q could not be loaded from the embedded tz database (release %s): %w", name, TZDataVersion, err)
	}
	return loc, nil
}
