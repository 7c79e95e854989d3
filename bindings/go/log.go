package capstan

// Log messages of a running tool (capstan_call_log).

// #include "capstan_go.h"
import "C"

import (
	"context"
	"strconv"
)

// LogLevel is the severity of a log message (Log): MCP's levels, the syslog
// severities of RFC 5424, least severe first. String gives MCP's name.
type LogLevel uint32

// Log levels.
const (
	LogDebug     LogLevel = C.CAPSTAN_LOG_DEBUG     // "debug": debugging detail
	LogInfo      LogLevel = C.CAPSTAN_LOG_INFO      // "info": informational
	LogNotice    LogLevel = C.CAPSTAN_LOG_NOTICE    // "notice": normal but significant
	LogWarning   LogLevel = C.CAPSTAN_LOG_WARNING   // "warning"
	LogError     LogLevel = C.CAPSTAN_LOG_ERROR     // "error"
	LogCritical  LogLevel = C.CAPSTAN_LOG_CRITICAL  // "critical": a critical condition
	LogAlert     LogLevel = C.CAPSTAN_LOG_ALERT     // "alert": action must be taken at once
	LogEmergency LogLevel = C.CAPSTAN_LOG_EMERGENCY // "emergency": the system is unusable
)

var logLevelNames = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// String is the level's MCP name ("debug" .. "emergency"), or
// "LogLevel(n)" for a value that is not a level.
func (l LogLevel) String() string {
	if int(l) < len(logLevelNames) {
		return logLevelNames[l]
	}
	return "LogLevel(" + strconv.FormatUint(uint64(l), 10) + ")"
}

// ParseLogLevel is the level with MCP's name name ("debug" .. "emergency");
// false for any other name.
func ParseLogLevel(name string) (LogLevel, bool) {
	for i, n := range logLevelNames {
		if n == name {
			return LogLevel(i), true
		}
	}
	return 0, false
}

// Log sends a log message of the call ctx belongs to (a tool's ctx) at
// level. It reaches the registry's event hook as an EventLog, on this
// goroutine before it returns, and, for a call from an MCP client that asked
// for logs at level or below, that client as notifications/message (logger:
// the tool's name). Any goroutine, any number of times while the call runs.
// ErrInvalidArgument for a level that is not one of the Log* constants or a
// message over 64 KiB (nothing is sent); ErrInvalidUTF8 for a message that
// is not UTF-8. Once the call has its result: ErrAlreadyCompleted (it timed
// out or was cancelled) or ErrStaleHandle (the tool returned).
// ErrInvalidArgument for a ctx that is not a tool's.
func Log(ctx context.Context, level LogLevel, message string) error {
	ci, ok := CallInfoFrom(ctx)
	if !ok || ci.call == 0 {
		return &Error{Op: "Log", Status: ErrInvalidArgument, Message: "ctx is not the context of a tool call"}
	}
	var errText *C.char
	st := C.cg_call_log(C.uintptr_t(ci.call), C.capstan_log_level(level), stringPtr(message), C.size_t(len(message)), &errText)
	if st != C.CAPSTAN_OK {
		return newError("Log", st, errText)
	}
	return nil
}
