-- suspend: set spec.suspend of the ScheduledPodAutoscaler to true.
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.suspend = true
return obj
