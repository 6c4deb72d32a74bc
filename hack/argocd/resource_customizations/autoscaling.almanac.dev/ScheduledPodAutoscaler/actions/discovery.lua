-- suspend holds the target at the baseline; resume lets the Schedules apply again; override
-- creates a OneShot Schedule that changes the bounds from now until a given time and that
-- almanac deletes once it has ended (almanac override). Argo CD asks for the params when the
-- action is run; override/action.lua says what each one takes.
local suspended = obj.spec ~= nil and obj.spec.suspend == true
local actions = {}
actions["suspend"] = {["disabled"] = suspended}
actions["resume"] = {["disabled"] = not suspended}
actions["override"] = {
  ["disabled"] = false,
  ["params"] = {
    {["name"] = "minReplicas"},
    {["name"] = "maxReplicas"},
    {["name"] = "duration"},
    {["name"] = "until"},
  },
}
return actions
