-- Health of an almanac Sleep or ClusterSleep (almanac.dev). Only the base library is used, so
-- the script runs both built in and as an argocd-cm override (no string or math library
-- there). A wake under way (phase Waking) is Healthy: a sync does not wait for a morning.
local function condition(ctype)
  if obj.status ~= nil and obj.status.conditions ~= nil then
    for _, c in ipairs(obj.status.conditions) do
      if c.type == ctype then
        return c
      end
    end
  end
  return nil
end

local function message(c, default)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return default
end

local generation = obj.metadata.generation or 0
if obj.status == nil or obj.status.observedGeneration == nil or obj.status.observedGeneration < generation then
  return {status = "Progressing", message = "Waiting for almanac to observe generation " .. tostring(generation)}
end

-- Ready False: InvalidSpec, RequestRefused or RecordUnreadable; its message says what to do.
local ready = condition("Ready")
if ready ~= nil and ready.status == "False" then
  return {status = "Degraded", message = message(ready, "Ready is False: " .. tostring(ready.reason))}
end
local contested = condition("Contested")
if contested ~= nil and contested.status == "True" then
  return {status = "Degraded", message = message(contested, "Another field manager keeps waking a workload during its sleep")}
end
local calendars = condition("Calendars")
if calendars ~= nil and calendars.status == "False" then
  return {status = "Degraded", message = message(calendars, "A calendar named in spec.calendars cannot be used")}
end
if obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = message(ready, "spec.suspend is true: everything it held is awake")}
end
if ready == nil or ready.status == "Unknown" then
  return {status = "Progressing", message = message(ready, "Waiting for the Ready condition")}
end
return {status = "Healthy", message = message(ready, "")}
