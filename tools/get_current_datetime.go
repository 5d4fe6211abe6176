package tools

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// CurrentDatetime is get_current_datetime.
var CurrentDatetime = builtin(Def[datetimeArgs]{
	Spec: Spec{
		Name:        "get_current_datetime",
		Category:    "system",
		Title:       "Current date and time",
		Description: "Returns the current date and time: ISO 8601, Unix time, the IANA time zone, and formatted date, time and full text. Pass timezone (an IANA name such as Europe/Paris) for another zone than the machine's.",
		Aliases:     []string{"getCurrentDateTime"},
		Instant:     true,
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"timezone":{"type":"string","description":"IANA time zone name; default: the machine's zone"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["iso8601","unix","timezone","date","time","full"],"properties":{
			"iso8601":{"type":"string"},"unix":{"type":"integer"},"unix_ms":{"type":"integer"},"timezone":{"type":"string"},
			"utc_offset":{"type":"string"},"date":{"type":"string"},"time":{"type":"string"},"weekday":{"type":"string"},"full":{"type":"string"}}}`),
	},
	Execute: func(c *Call, a datetimeArgs) (*Result, error) {
		t := time.Now()
		zone := localZoneName()
		if a.Timezone != "" {
			loc, err := time.LoadLocation(a.Timezone)
			if err != nil {
				return nil, Errorf(InvalidParams, "unknown time zone %q: give an IANA name such as Europe/Paris", a.Timezone)
			}
			t, zone = t.In(loc), a.Timezone
		}
		s := map[string]any{
			"iso8601":    t.Format(time.RFC3339),
			"unix":       t.Unix(),
			"unix_ms":    t.UnixMilli(),
			"timezone":   zone,
			"utc_offset": t.Format("-07:00"),
			"date":       t.Format("2006-01-02"),
			"time":       t.Format("15:04:05"),
			"weekday":    t.Weekday().String(),
			"full":       t.Format("Monday, January 2, 2006 15:04:05 MST"),
		}
		content := fmt.Sprintf("%s (%s, %s)\nISO 8601: %s\nUnix: %d", s["full"], zone, s["utc_offset"], s["iso8601"], s["unix"])
		return Success(content, s), nil
	},
})

type datetimeArgs struct {
	Timezone string `json:"timezone"`
}

// localZoneName returns the IANA name of the local zone when it can be
// found ($TZ, /etc/timezone, the /etc/localtime link), else the zone's
// abbreviation.
func localZoneName() string {
	if name := localZoneID(); name != "" {
		return name
	}
	n, _ := time.Now().Zone() // the abbreviation changes with daylight saving time: never cached
	return n
}

// localZoneID is the IANA name of the local zone, "" when none is found.
// It is resolved once per process, as Go's time.Local is (it reads $TZ and
// /etc/localtime once, on first use): a call no longer reads /etc/timezone
// and the /etc/localtime link each time.
var localZoneID = sync.OnceValue(func() string {
	if name := time.Local.String(); name != "Local" && name != "" {
		return name
	}
	return systemZoneName()
})
