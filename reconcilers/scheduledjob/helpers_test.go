package scheduledjob

import (
	"context"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// decideAt is decide as one reconcile calls it: the schedule compiled with the calendars of
// book, and a reconcile's budget.
func decideAt(sj *batchv1alpha1.ScheduledJob, book *calendarv1alpha1.Book, owned []*batchv1.Job, resumed, now time.Time) plan {
	return decide(sj, compile(sj, book), owned, resumed, now, newBudget(context.Background()))
}
