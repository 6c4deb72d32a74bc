-- Health of an almanac ScheduledJob (batch.almanac.dev). Only the base library is used, so the
-- script runs both built in and as an argocd-cm override (no string or math library there).
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

local ready = condition("Ready")
if ready ~= nil and ready.status == "False" then
  return {status = "Degraded", message = message(ready, "Ready is False: " .. tostring(ready.reason))}
end
local calendars = condition("Calendars")
if calendars ~= nil and calendars.status == "False" then
  return {status = "Degraded", message = message(calendars, "A calendar in spec.calendars cannot be used")}
end

local phase = obj.status.phase
if phase == "Failed" then
  return {status = "Degraded", message = "The one-shot's Job failed: see the Job's conditions and its Pods' logs"}
end
if phase == "Missed" then
  return {status = "Degraded", message = "The one-shot was missed: it could not start before at + startingDeadlineSeconds"}
end
if obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = message(ready, "spec.suspend is true: no Job starts")}
end
if phase == "Succeeded" then
  return {status = "Healthy", message = "The one-shot's Job completed"}
end
if phase == "Skipped" then
  local why = obj.status.lastSkippedReason
  if why == nil or why == "" then
    why = "its instant was closed by spec.calendars"
  end
  return {status = "Healthy", message = "The one-shot was skipped: " .. why}
end
if ready ~= nil and ready.status == "Unknown" then
  return {status = "Progressing", message = message(ready, "Ready is Unknown")}
end
return {status = "Healthy", message = message(ready, "")}
