-- Health of an almanac Calendar (almanac.dev): a namespaced calendar has no status. It is healthy
-- once it exists; the Schedules and ScheduledJobs that name it say, in their Calendars
-- condition, when it cannot be used (and are Degraded then).
return {status = "Healthy", message = "A calendar has no status: the Calendars condition of the Schedules and ScheduledJobs naming it says whether it can be used"}
