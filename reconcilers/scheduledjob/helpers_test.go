package scheduledjob

import "strconv"

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
