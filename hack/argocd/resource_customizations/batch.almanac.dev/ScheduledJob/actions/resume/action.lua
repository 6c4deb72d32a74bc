-- resume: set spec.suspend of the ScheduledJob to false.
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.suspend = false
return obj
