-- Health of an almanac Schedule (autoscaling.almanac.dev). Only the base library is used, so
-- the script runs both built in and as an argocd-cm override (no string or math library there).
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

local valid = condition("Valid")
if valid ~= nil and valid.status == "False" then
  return {status = "Degraded", message = message(valid, "The Schedule cannot be evaluated: " .. tostring(valid.reason))}
end
local calendars = condition("Calendars")
if calendars ~= nil and calendars.status == "False" then
  return {status = "Degraded", message = message(calendars, "A calendar in spec.calendars cannot be used")}
end
-- Left out of its autoscaler's bounds (overlapPolicy Forbid): it has no effect.
local overlap = condition("ForbiddenOverlap")
if overlap ~= nil and overlap.status == "True" then
  return {status = "Degraded", message = message(overlap, "The Schedule is left out of its autoscaler's bounds")}
end
local phase = obj.status.phase
if (obj.spec ~= nil and obj.spec.suspend == true) or phase == "Suspended" then
  return {status = "Suspended", message = "spec.suspend is true: the Schedule changes nothing"}
end
if phase == "Completed" then
  return {status = "Healthy", message = "The Schedule's last window has closed"}
end
if phase == "Invalid" then
  return {status = "Degraded", message = message(valid, "The Schedule cannot be evaluated")}
end
return {status = "Healthy", message = message(valid, "")}
