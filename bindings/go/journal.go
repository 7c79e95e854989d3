package capstan

// #include <stdlib.h>
// #include "capstan_go.h"
import "C"

import (
	"sync"
	"unsafe"
)

// Journal records the calls a registry runs under a run id (WithRunID)
// and answers a call it has a completed record of without running its
// tool (issue #47). Open one with OpenJournalJSONL or OpenJournalSQLite,
// or make one kept by a store of your own with NewJournal; give it to
// Registry.SetJournal, and Close it; a registry using it keeps it alive
// until the registry is closed or given another journal.
type Journal struct {
	mu  sync.Mutex
	ptr *C.capstan_journal
}

// OpenJournalJSONL opens (creating it if absent) a JSON Lines journal:
// record/replay fixtures a test checks in. One process at a time. A file
// with a line that is not a record fails with an error naming the line.
func OpenJournalJSONL(path string) (*Journal, error) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	var out *C.capstan_journal
	if err := check("OpenJournalJSONL", func() C.capstan_status {
		return C.capstan_journal_open_jsonl(p, C.size_t(len(path)), &out)
	}); err != nil {
		return nil, err
	}
	return &Journal{ptr: out}, nil
}

// OpenJournalSQLite opens (creating it if absent) an SQLite journal, safe
// for several processes on one file; fullSync fsyncs every commit. Fails
// with ErrUnsupported in a library built without the journal-sqlite feature.
func OpenJournalSQLite(path string, fullSync bool) (*Journal, error) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	var flags C.uint32_t
	if fullSync {
		flags = C.CAPSTAN_JOURNAL_FULL_SYNC
	}
	var out *C.capstan_journal
	if err := check("OpenJournalSQLite", func() C.capstan_status {
		return C.capstan_journal_open_sqlite(p, C.size_t(len(path)), flags, &out)
	}); err != nil {
		return nil, err
	}
	return &Journal{ptr: out}, nil
}

// Close frees the journal; registries using it keep it until they stop.
// Closing twice is a no-op.
func (j *Journal) Close() error {
	j.mu.Lock()
	p := j.ptr
	j.ptr = nil
	j.mu.Unlock()
	C.capstan_journal_free(p)
	return nil
}

// SetJournal makes the registry use j (nil: none) for every batch run
// WithRunID, from the next batch on. With replay, no tool runs at all: a
// call missing from the journal fails with an error result naming it.
func (r *Registry) SetJournal(j *Journal, replay bool) error {
	var p *C.capstan_journal
	if j != nil {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.ptr == nil {
			return &Error{Op: "SetJournal", Status: ErrInvalidArgument, Message: "the journal is closed"}
		}
		p = j.ptr
	}
	var flags C.uint32_t
	if replay {
		flags = C.CAPSTAN_JOURNAL_REPLAY
	}
	if err := r.enter("SetJournal"); err != nil {
		return err
	}
	defer r.leave()
	return check("SetJournal", func() C.capstan_status {
		return C.capstan_registry_set_journal(r.ptr, p, flags)
	})
}
