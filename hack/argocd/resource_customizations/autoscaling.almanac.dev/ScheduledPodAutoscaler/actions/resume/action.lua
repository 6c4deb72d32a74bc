-- resume: set spec.suspend of the ScheduledPodAutoscaler to false.
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.suspend = false
return obj
