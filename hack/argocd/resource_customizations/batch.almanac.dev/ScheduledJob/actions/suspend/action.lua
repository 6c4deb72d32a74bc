-- suspend: set spec.suspend of the ScheduledJob to true.
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.suspend = true
return obj
