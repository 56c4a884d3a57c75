package dex

import "time"

// Bar sizes in minutes kept by the dex_candles job (JobCandles): every tf of the token
// chart; the pair chart's bar sizes (1, 15, 60, 240, 1440, 10080) are among them.
const (
	Week  = 10080 // bars start on ISO Monday 00:00 UTC
	Month = 43800 // bars start on the first of the calendar month, 00:00 UTC
)

// Resolutions lists the bar sizes, finest first.
var Resolutions = []int{1, 5, 10, 15, 30, 60, 120, 240, 480, 720, 1440, Week, Month}

// BarStart is the start of the tf-minute bar that contains t.
func BarStart(t time.Time, tf int) time.Time {
	t = t.UTC()
	switch tf {
	case Week:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return t.Truncate(time.Duration(tf) * time.Minute) // tf divides a day: aligned to UTC midnight
}
