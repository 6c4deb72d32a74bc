-- Health of an almanac ScheduledPodAutoscaler (autoscaling.almanac.dev). Only the base library
-- is used, so the script runs both built in and as an argocd-cm override (no string or math
-- library there).
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

-- Ready False: TargetNotFound, TargetKindNotServed, HorizontalPodAutoscalerConflict,
-- ApplyFailed, RequestRefused or FieldManagerConflict; its message says what to do.
local ready = condition("Ready")
if ready ~= nil and ready.status == "False" then
  return {status = "Degraded", message = message(ready, "Ready is False: " .. tostring(ready.reason))}
end
local conflict = condition("Conflict")
if conflict ~= nil and conflict.status == "True" then
  return {status = "Degraded", message = message(conflict, "Another field manager keeps changing the target")}
end
local valid = condition("SchedulesValid")
if valid ~= nil and valid.status == "False" then
  return {status = "Degraded", message = message(valid, "A Schedule cannot be evaluated")}
end
local overlap = condition("ForbiddenOverlap")
if overlap ~= nil and overlap.status == "True" then
  return {status = "Degraded", message = message(overlap, "overlapPolicy is Forbid, but Schedules overlap")}
end
if obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = message(ready, "spec.suspend is true: the target is held at the baseline")}
end
if ready == nil or ready.status == "Unknown" then
  return {status = "Progressing", message = message(ready, "Waiting for the Ready condition")}
end
return {status = "Healthy", message = message(ready, "")}
