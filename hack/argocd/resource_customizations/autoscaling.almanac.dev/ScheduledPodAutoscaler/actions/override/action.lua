-- override: what `almanac override` does (commands/override): create a OneShot Schedule that
-- changes the bounds of this ScheduledPodAutoscaler from now until a given time, labelled
-- autoscaling.almanac.dev/override=true, so that almanac's Schedule reconciler deletes it once
-- its window has ended. It is named NAME-override-<yyyymmddhhmm> (its start in UTC), lives in
-- the autoscaler's namespace, names the autoscaler in spec.scaleTargetRef.name and is owned by
-- it (an ownerReference: Argo CD shows it under the autoscaler, and it goes when the
-- autoscaler goes). It passes through almanac's admission webhooks like any Schedule.
--
-- Parameters (actionParams, strings; an empty one counts as not given):
--   minReplicas, maxReplicas  the bounds while the override is in force; at least one. An
--                             omitted one is the autoscaler's own (maxReplicas raised to
--                             minReplicas if below it).
--   duration                  how long it lasts from now, a Go duration ("2h", "90m", "1h30m"),
--                             like --for; or
--   until                     when it ends, RFC 3339 with Z or an offset
--                             ("2027-01-15T18:00:00+01:00"), like --until.
-- The window starts now rounded down to the minute and ends at until, or after duration,
-- rounded up to the minute; the Schedule is written in UTC. Mistakes are refused with
-- error(message, 0), naming the parameter and the fix.
--
-- Argo CD runs actions with the base and table libraries and a safe os library (time and
-- date) only: there is no string library, so strings are read by comparison and
-- concatenation (tokens below), and there is no time zone database, so until must carry
-- its offset.
local LABEL = "autoscaling.almanac.dev/override"
local MAX_INT32 = 2147483647
-- The longest duration that `almanac override --for` takes: a Go time.Duration holds at most
-- 2^63-1 nanoseconds (2562047h47m16.854775807s, about 292 years).
local MAX_DURATION_SECONDS = 9223372036.854775807
local MAX_DURATION_TEXT = "2562047h47m16.854775807s"

local function fail(message)
  error(message, 0)
end

local function quoted(s)
  return '"' .. s .. '"'
end

local params = actionParams
if type(params) ~= "table" then
  params = {}
end

local function param(name)
  local v = params[name]
  if v == nil or v == "" then
    return nil
  end
  return tostring(v)
end

-- tokens splits s into tokens of alphabet (a list of strings, longer ones before their
-- prefixes), or returns nil when s holds anything else. s starts with q exactly when
-- q <= s <= q .. top, top being a string of byte 255 at least as long as s.
local function tokens(s, alphabet)
  local top = "\255"
  while #top < #s do
    top = top .. top
  end
  local out, prefix = {}, ""
  while #prefix < #s do
    local found = nil
    for _, t in ipairs(alphabet) do
      local q = prefix .. t
      if q <= s and s <= q .. top then
        found = t
        break
      end
    end
    if found == nil then
      return nil
    end
    table.insert(out, found)
    prefix = prefix .. found
  end
  return out
end

local DIGIT = {["0"] = 0, ["1"] = 1, ["2"] = 2, ["3"] = 3, ["4"] = 4, ["5"] = 5, ["6"] = 6, ["7"] = 7, ["8"] = 8, ["9"] = 9}
local DIGITS = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

local function with(list, more)
  local out = {}
  for _, t in ipairs(more) do
    table.insert(out, t)
  end
  for _, t in ipairs(list) do
    table.insert(out, t)
  end
  return out
end

local function floor(x)
  return x - x % 1
end

-- number reads the digits of list from i to j as a whole number.
local function number(list, i, j)
  local n = 0
  for k = i, j do
    n = n * 10 + DIGIT[list[k]]
  end
  return n
end

-- replicas reads a bound as Go's strconv.ParseInt does (digits, an optional sign): a whole
-- number from least to MAX_INT32.
local function replicas(name, least, hint)
  local s = param(name)
  if s == nil then
    return nil
  end
  local t = tokens(s, with(DIGITS, {"-", "+"}))
  if t ~= nil and #t > 1 and t[1] == "+" then
    table.remove(t, 1)
  end
  local digitsOnly = t ~= nil and #t > 0
  if t ~= nil then
    for _, c in ipairs(t) do
      if DIGIT[c] == nil then
        digitsOnly = false
      end
    end
  end
  if not digitsOnly then
    if t ~= nil and #t > 1 and t[1] == "-" then
      fail(name .. "=" .. s .. " is negative: " .. hint)
    end
    fail(name .. "=" .. quoted(s) .. " is not a whole number of replicas: give digits only, e.g. " .. name .. "=10")
  end
  if #t > 10 or number(t, 1, #t) > MAX_INT32 then
    fail(name .. "=" .. s .. " is more replicas than a Schedule holds (at most " .. MAX_INT32 .. "): give a smaller number")
  end
  local n = number(t, 1, #t)
  if n < least then
    fail(name .. "=" .. s .. ": " .. hint)
  end
  return n
end

local UNITS = {
  ["ns"] = 1e-9, ["us"] = 1e-6, ["\194\181s"] = 1e-6, ["\206\188s"] = 1e-6, ["ms"] = 1e-3,
  ["s"] = 1, ["m"] = 60, ["h"] = 3600,
}
local DURATION_ALPHABET = with(DIGITS, {"ns", "us", "\194\181s", "\206\188s", "ms", "s", "m", "h", ".", "-", "+"})
local DURATION_EXPECTED = 'a Go duration such as "30m", "2h" or "1h30m" (units h, m, s, ms, us, ns)'

-- seconds reads duration as Go's time.ParseDuration does, in seconds.
local function seconds(s)
  local t = tokens(s, DURATION_ALPHABET)
  if t == nil or #t == 0 then
    fail("duration=" .. quoted(s) .. " is not " .. DURATION_EXPECTED)
  end
  local i, sign = 1, 1
  if t[1] == "-" or t[1] == "+" then
    if t[1] == "-" then
      sign = -1
    end
    i = 2
  end
  if i == #t and t[i] == "0" then
    return 0
  end
  if i > #t then
    fail("duration=" .. quoted(s) .. " is not " .. DURATION_EXPECTED)
  end
  local total = 0
  while i <= #t do
    local whole, fraction, scale, digits = 0, 0, 1, 0
    while i <= #t and DIGIT[t[i]] ~= nil do
      whole = whole * 10 + DIGIT[t[i]]
      digits = digits + 1
      i = i + 1
    end
    if i <= #t and t[i] == "." then
      i = i + 1
      while i <= #t and DIGIT[t[i]] ~= nil do
        scale = scale / 10
        fraction = fraction + DIGIT[t[i]] * scale
        digits = digits + 1
        i = i + 1
      end
    end
    if digits == 0 then
      fail("duration=" .. quoted(s) .. " is not " .. DURATION_EXPECTED)
    end
    if i > #t then
      fail("duration=" .. quoted(s) .. " has a number without a unit: " .. DURATION_EXPECTED)
    end
    local unit = UNITS[t[i]]
    if unit == nil then
      fail("duration=" .. quoted(s) .. " is not " .. DURATION_EXPECTED)
    end
    i = i + 1
    total = total + (whole + fraction) * unit
    if total > MAX_DURATION_SECONDS then
      fail("duration=" .. quoted(s) .. " is longer than " .. MAX_DURATION_TEXT ..
        ", the longest duration almanac override takes (a Go time.Duration): give a shorter duration, or an until")
    end
  end
  return sign * total
end

-- days and civil convert between a date and the days since 1970-01-01 (H. Hinnant's
-- algorithms, with floor division: Lua 5.1 has no integer division).
local function days(y, m, d)
  if m <= 2 then
    y = y - 1
  end
  local era = floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function civil(z)
  z = z + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
  local mp = floor((5 * doy + 2) / 153)
  local d = doy - floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if m > 12 then
    m = m - 12
  end
  local y = yoe + era * 400
  if m <= 2 then
    y = y + 1
  end
  return y, m, d
end

local function pad(n, width)
  local s = tostring(n)
  while #s < width do
    s = "0" .. s
  end
  return s
end

-- wall writes the Unix time t in UTC: "yyyy-MM-ddTHH:mm" (a OneShot's startTime and
-- endTime), or with sep "" and no separators (the name's suffix), or with seconds and Z.
local function wall(t, style)
  local z = floor(t / 86400)
  local y, m, d = civil(z)
  local rest = t - z * 86400
  local hh, mm, ss = floor(rest / 3600), floor(rest % 3600 / 60), floor(rest % 60)
  if style == "name" then
    return pad(y, 4) .. pad(m, 2) .. pad(d, 2) .. pad(hh, 2) .. pad(mm, 2)
  end
  local s = pad(y, 4) .. "-" .. pad(m, 2) .. "-" .. pad(d, 2) .. "T" .. pad(hh, 2) .. ":" .. pad(mm, 2)
  if style == "seconds" then
    return s .. ":" .. pad(ss, 2) .. "Z"
  end
  return s
end

local UNTIL_EXPECTED = 'RFC 3339 with Z or an offset, e.g. "2027-01-15T18:00:00+01:00" or "2027-01-15T17:00:00Z"'

-- instant reads until, RFC 3339 (seconds optional, a fraction allowed), as a Unix time.
local function instant(s)
  local t = tokens(s, with(DIGITS, {"-", ":", "T", "t", "Z", "z", "+", ".", " "}))
  local bad = "until=" .. quoted(s) .. " is not " .. UNTIL_EXPECTED
  local function digitsAt(i, n)
    for k = i, i + n - 1 do
      if t[k] == nil or DIGIT[t[k]] == nil then
        return false
      end
    end
    return true
  end
  if t == nil or not (digitsAt(1, 4) and t[5] == "-" and digitsAt(6, 2) and t[8] == "-" and digitsAt(9, 2)) then
    fail(bad)
  end
  if t[11] == " " then
    fail("until=" .. quoted(s) .. ' separates the date and the time with a space: use "T", e.g. ' .. UNTIL_EXPECTED)
  end
  if not ((t[11] == "T" or t[11] == "t") and digitsAt(12, 2) and t[14] == ":" and digitsAt(15, 2)) then
    fail(bad)
  end
  local y, mo, d = number(t, 1, 4), number(t, 6, 7), number(t, 9, 10)
  local h, mi, sec = number(t, 12, 13), number(t, 15, 16), 0
  local i = 17
  if t[i] == ":" then
    if not digitsAt(i + 1, 2) then
      fail(bad)
    end
    sec = number(t, i + 1, i + 2)
    i = i + 3
    if t[i] == "." then
      i = i + 1
      local scale, n = 1, 0
      while t[i] ~= nil and DIGIT[t[i]] ~= nil do
        scale = scale / 10
        sec = sec + DIGIT[t[i]] * scale
        n = n + 1
        i = i + 1
      end
      if n == 0 then
        fail(bad)
      end
    end
  end
  local offset = nil
  if (t[i] == "Z" or t[i] == "z") and i == #t then
    offset = 0
  elseif (t[i] == "+" or t[i] == "-") and i + 5 == #t and digitsAt(i + 1, 2) and t[i + 3] == ":" and digitsAt(i + 4, 2) then
    local oh, om = number(t, i + 1, i + 2), number(t, i + 4, i + 5)
    if oh > 23 or om > 59 then
      fail("until=" .. quoted(s) .. " has an invalid UTC offset: expected +hh:mm or -hh:mm from -23:59 to +23:59")
    end
    offset = (oh * 60 + om) * 60
    if t[i] == "-" then
      offset = -offset
    end
  elseif i > #t then
    fail("until=" .. quoted(s) .. " has no UTC offset, and Argo CD's Lua has no time zone database to read a wall time in: " ..
      "add Z (UTC) or the offset, e.g. " .. quoted(s .. "Z") .. " or " .. quoted(s .. "+01:00"))
  else
    fail(bad)
  end
  local monthDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
  if y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) then
    monthDays[2] = 29
  end
  if mo < 1 or mo > 12 then
    fail("until=" .. quoted(s) .. " is not a valid date: months go from 01 to 12")
  end
  if d < 1 or d > monthDays[mo] then
    fail("until=" .. quoted(s) .. " is not a valid date: month " .. pad(mo, 2) .. " of " .. y .. " has " .. monthDays[mo] .. " days")
  end
  if h > 23 or mi > 59 or sec >= 60 then
    fail("until=" .. quoted(s) .. " is not a valid time of day: expected HH:mm:ss on a 24-hour clock from 00:00:00 to 23:59:59")
  end
  return days(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset
end

-- The bounds, checked as `almanac override` checks --min and --max.
local minReplicas = replicas("minReplicas", 0, "give 0 or more replicas")
local maxReplicas = replicas("maxReplicas", 1, "maxReplicas is at least 1; give 1 or more, or leave it out to keep the autoscaler's")
if minReplicas == nil and maxReplicas == nil then
  fail("minReplicas and maxReplicas are both missing: give at least one, e.g. minReplicas=10 " ..
    "(the other stays the autoscaler's; maxReplicas is raised to minReplicas if below it)")
end
if minReplicas ~= nil and maxReplicas ~= nil and minReplicas > maxReplicas then
  fail("minReplicas=" .. minReplicas .. " is greater than maxReplicas=" .. maxReplicas .. ": give a maxReplicas of at least " ..
    minReplicas .. ", or leave maxReplicas out (the autoscaler's maxReplicas is then raised to minReplicas if below it)")
end

-- Now, from Argo CD's safe os library.
local ok, os = pcall(require, "os")
if not ok or type(os) ~= "table" or type(os.time) ~= "function" then
  fail("this Lua interpreter has no os.time, so the override's start (now) is unknown: run it from Argo CD, or use almanac override")
end
local now = os.time()

-- The end, checked as `almanac override` checks --for and --until.
local duration, untilText = param("duration"), param("until")
local finish
if duration ~= nil and untilText ~= nil then
  fail("duration and until are both given: the override ends at one time; give duration (e.g. duration=2h) or until, not both")
elseif duration == nil and untilText == nil then
  fail("the end of the override is missing: give duration (e.g. duration=2h) or until (e.g. until=2027-01-15T18:00:00+01:00)")
elseif duration ~= nil then
  local d = seconds(duration)
  if d < 0 then
    fail("duration=" .. duration .. " is negative: give a positive duration such as 30m or 2h")
  elseif d == 0 then
    fail("duration=" .. duration .. " is no time at all: give a positive duration such as 30m or 2h")
  end
  finish = now + d
else
  finish = instant(untilText)
  if not (finish > now) then
    fail("until=" .. quoted(untilText) .. " is " .. wall(floor(finish), "seconds") .. ", which is not after now (" ..
      wall(now, "seconds") .. "): give a time in the future")
  end
end

-- The window: now rounded down, the end rounded up, to whole minutes (a OneShot's times).
local start = now - now % 60
if finish % 60 ~= 0 then
  finish = finish - finish % 60 + 60
end
-- The last minute almanac schedules (timing.MaxYear): 2261-12-31T23:59Z, in the Schedule's UTC.
local LAST_END = 9214646340
if finish > LAST_END then
  fail("the override would end at " .. wall(floor(finish), "seconds") ..
    ", after 2261, the last year almanac schedules: give a shorter duration or an earlier until")
end

-- The name, as almanac.ScheduleName: NAME-override-<start in UTC>, or, when that is longer
-- than a name may be (253), a generateName of NAME cut to leave room for the API server's
-- five random characters (58 in all).
local spa = obj.metadata.name
local metadata = {namespace = obj.metadata.namespace, labels = {[LABEL] = "true"}}
local name = spa .. "-override-" .. wall(start, "name")
if #name <= 253 then
  metadata.name = name
else
  local chars = tokens(spa, with(DIGITS, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q",
    "r", "s", "t", "u", "v", "w", "x", "y", "z", ".", "-"})) or {}
  local keep = 58 - #"-override-"
  while #chars > keep or (#chars > 0 and (chars[#chars] == "." or chars[#chars] == "-")) do
    table.remove(chars)
  end
  metadata.generateName = table.concat(chars) .. "-override-"
end
if obj.metadata.uid ~= nil and obj.metadata.uid ~= "" then
  metadata.ownerReferences = {{apiVersion = obj.apiVersion, kind = obj.kind, name = spa, uid = obj.metadata.uid}}
end

local spec = {
  scaleTargetRef = {name = spa},
  type = "OneShot",
  startTime = wall(start),
  endTime = wall(finish),
  timeZone = "UTC",
}
spec.minReplicas = minReplicas
spec.maxReplicas = maxReplicas

local schedule = {
  apiVersion = "autoscaling.almanac.dev/v1alpha1",
  kind = "Schedule",
  metadata = metadata,
  spec = spec,
}
return {{operation = "create", resource = schedule}}
