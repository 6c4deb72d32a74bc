-- run-now starts one Job now, also while suspended (under spec.concurrencyPolicy); suspend
-- and resume set spec.suspend.
local suspended = obj.spec ~= nil and obj.spec.suspend == true
local actions = {}
actions["run-now"] = {["disabled"] = false}
actions["suspend"] = {["disabled"] = suspended}
actions["resume"] = {["disabled"] = not suspended}
return actions
