package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// explicitUntil is the end of the explicit transitions that genzones writes (exclusive),
// 2038-01-01T00:00:00Z: what `zic -b fat` writes, and the CI hosts' zoneinfo has.
//
// Go's zoneinfo.zip is "slim": a zone's transitions stop where its current rules begin (1996
// for Europe/Berlin), and every later instant is computed from the POSIX TZ string at the end
// of the data, on each lookup. That is 14 times slower than a lookup in the table, and
// Time.ZoneBounds reports a wrong end there for instants on the last day of a leap year
// (golang/go#81583: Dec 31 00:00 UTC, at or before the instant itself). Writing the
// transitions out up to 2038 makes lookups as fast, and ZoneBounds as right, as they were
// with the host's zoneinfo; api/timing also steps over the wrong end (periodEnd) for the
// years after.
var explicitUntil = time.Date(2038, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()

// scanStep is how far apart the instants are at which expand compares the zone's state; a
// change between two of them is located to the second. The rules of the TZ strings in the tz
// database change the offset at most twice a year, months apart.
const scanStep = 6 * 3600

// tzif is the version 2+ part of TZif data (RFC 8536) that time.LoadLocationFromTZData reads.
type tzif struct {
	head   []byte // the version 1 header and data block, and the version 2+ header's magic, version and padding
	times  []int64
	idx    []byte
	types  []ttinfo
	chars  []byte
	leap   []byte // leap second records, as they were
	isstd  []byte
	isut   []byte
	footer []byte // "\n<TZ string>\n"
}

type ttinfo struct {
	utoff   int32
	isdst   byte
	desigix byte
}

// state is what a lookup in a zone answers for an instant.
type state struct {
	offset int
	isDST  bool
	abbr   string
}

func parseTZif(data []byte) (*tzif, error) {
	if len(data) < 44 || string(data[:4]) != "TZif" {
		return nil, errors.New("not TZif data")
	}
	if data[4] < '2' {
		return nil, errors.New("TZif version 1 holds no 64-bit data and no TZ string")
	}
	counts := func(at int) (isut, isstd, leap, timecnt, typecnt, charcnt int) {
		c := make([]int, 6)
		for i := range c {
			c[i] = int(binary.BigEndian.Uint32(data[at+20+4*i:]))
		}
		return c[0], c[1], c[2], c[3], c[4], c[5]
	}
	isut, isstd, leap, timecnt, typecnt, charcnt := counts(0)
	v2 := 44 + timecnt*4 + timecnt + typecnt*6 + charcnt + leap*8 + isstd + isut
	if len(data) < v2+44 || string(data[v2:v2+4]) != "TZif" {
		return nil, errors.New("no version 2 header after the version 1 data")
	}
	isut, isstd, leap, timecnt, typecnt, charcnt = counts(v2)
	t := &tzif{head: bytes.Clone(data[:v2+20])}
	p := v2 + 44
	take := func(n int) ([]byte, error) {
		if n < 0 || p+n > len(data) {
			return nil, errors.New("truncated TZif data")
		}
		b := data[p : p+n]
		p += n
		return bytes.Clone(b), nil
	}
	raw, err := take(timecnt * 8)
	if err != nil {
		return nil, err
	}
	for i := range timecnt {
		t.times = append(t.times, int64(binary.BigEndian.Uint64(raw[8*i:])))
	}
	if t.idx, err = take(timecnt); err != nil {
		return nil, err
	}
	if raw, err = take(typecnt * 6); err != nil {
		return nil, err
	}
	for i := range typecnt {
		t.types = append(t.types, ttinfo{utoff: int32(binary.BigEndian.Uint32(raw[6*i:])), isdst: raw[6*i+4], desigix: raw[6*i+5]})
	}
	if t.chars, err = take(charcnt); err != nil {
		return nil, err
	}
	if t.leap, err = take(leap * 12); err != nil {
		return nil, err
	}
	if t.isstd, err = take(isstd); err != nil {
		return nil, err
	}
	if t.isut, err = take(isut); err != nil {
		return nil, err
	}
	t.footer = bytes.Clone(data[p:])
	return t, nil
}

func (t *tzif) bytes() []byte {
	var b bytes.Buffer
	b.Write(t.head)
	for _, n := range []int{len(t.isut), len(t.isstd), len(t.leap) / 12, len(t.times), len(t.types), len(t.chars)} {
		_ = binary.Write(&b, binary.BigEndian, uint32(n))
	}
	for _, tt := range t.times {
		_ = binary.Write(&b, binary.BigEndian, tt)
	}
	b.Write(t.idx)
	for _, ty := range t.types {
		_ = binary.Write(&b, binary.BigEndian, ty.utoff)
		b.WriteByte(ty.isdst)
		b.WriteByte(ty.desigix)
	}
	b.Write(t.chars)
	b.Write(t.leap)
	b.Write(t.isstd)
	b.Write(t.isut)
	b.Write(t.footer)
	return b.Bytes()
}

// typeOf returns the index of the local time type that st is, adding it when there is none.
func (t *tzif) typeOf(st state) (byte, error) {
	abbr := func(ix byte) string {
		s := t.chars[ix:]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return string(s)
	}
	for i, ty := range t.types {
		if int(ty.utoff) == st.offset && (ty.isdst != 0) == st.isDST && abbr(ty.desigix) == st.abbr {
			return byte(i), nil
		}
	}
	if len(t.types) >= 255 || len(t.chars)+len(st.abbr)+1 > 255 {
		return 0, errors.New("too many local time types")
	}
	ix := bytes.Index(append(bytes.Clone(t.chars), 0), append([]byte(st.abbr), 0))
	if ix < 0 {
		ix = len(t.chars)
		t.chars = append(append(t.chars, st.abbr...), 0)
	}
	var dst byte
	if st.isDST {
		dst = 1
	}
	t.types = append(t.types, ttinfo{utoff: int32(st.offset), isdst: dst, desigix: byte(ix)})
	if len(t.isstd) > 0 {
		t.isstd = append(t.isstd, 0)
	}
	if len(t.isut) > 0 {
		t.isut = append(t.isut, 0)
	}
	return byte(len(t.types) - 1), nil
}

func stateAt(loc *time.Location, sec int64) state {
	at := time.Unix(sec, 0).In(loc)
	abbr, offset := at.Zone()
	return state{offset: offset, isDST: at.IsDST(), abbr: abbr}
}

// expand writes out, as explicit transitions, the changes that a zone's TZ string makes after
// its last transition and before explicitUntil; the TZ string still answers after that. A
// zone whose TZ string makes no change (no daylight saving time) is returned as it was.
func expand(name string, data []byte) ([]byte, error) {
	t, err := parseTZif(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(t.footer) <= 2 {
		return data, nil
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	from := time.Date(1970, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()
	if n := len(t.times); n > 0 {
		from = max(from, t.times[n-1])
	}
	cur := stateAt(loc, from)
	for s := from; s < explicitUntil; s += scanStep {
		next := min(s+scanStep, explicitUntil)
		st := stateAt(loc, next)
		if st == cur {
			continue
		}
		// The first second in (s, next] with the new state.
		lo, hi := s, next
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if stateAt(loc, mid) == st {
				hi = mid
			} else {
				lo = mid
			}
		}
		if hi >= explicitUntil {
			break
		}
		ix, err := t.typeOf(st)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		t.times = append(t.times, hi)
		t.idx = append(t.idx, ix)
		cur = st
	}
	return t.bytes(), nil
}
