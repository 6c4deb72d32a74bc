-- run-now: ask the ScheduledJob for one Job now by setting the annotation
-- batch.almanac.dev/run-now to a token it has not handled (almanac starts one Job per
-- distinct token; status.runNow records the token handled). A token has 1 to 63 letters,
-- digits, '.', '_', '-' or ':'. This one is "argocd-<UTC time>-<resourceVersion>":
--   * the time comes from os.date, which Argo CD provides (a safe os library holding only
--     time and date); it is left out where os is not available;
--   * metadata.resourceVersion changes with every write to the object, so two requests in
--     the same second differ; it is left out unless it is a whole number;
--   * if the result still equals the token in the annotation or in status.runNow, a counter
--     is appended ("-1", "-2", ...).
-- Only the base and table libraries are used (argocd-cm overrides have no string or math).
local key = "batch.almanac.dev/run-now"
local parts = {"argocd"}

local ok, os = pcall(require, "os")
if ok and type(os) == "table" and type(os.date) == "function" then
  table.insert(parts, os.date("!%Y%m%dT%H%M%SZ"))
end

local rv = tonumber(obj.metadata.resourceVersion)
if rv ~= nil and rv >= 0 and rv < 1e15 and rv % 1 == 0 then
  table.insert(parts, tostring(rv))
end

if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
local previous = obj.metadata.annotations[key]
local handled = nil
if obj.status ~= nil and obj.status.runNow ~= nil then
  handled = obj.status.runNow.token
end

local base = table.concat(parts, "-")
local token = base
local n = 0
while token == previous or token == handled do
  n = n + 1
  token = base .. "-" .. tostring(n)
end

obj.metadata.annotations[key] = token
return obj
