-- suspend holds the target at the baseline; resume lets the Schedules apply again.
local suspended = obj.spec ~= nil and obj.spec.suspend == true
local actions = {}
actions["suspend"] = {["disabled"] = suspended}
actions["resume"] = {["disabled"] = not suspended}
return actions
