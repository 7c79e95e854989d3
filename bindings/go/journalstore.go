package capstan

// A journal kept by the host (capstan_journal_new): capstan calls the
// store through the trampolines in capstan_go.c, with a cgo.Handle of it
// as user_data. capstan owns the handle once cg_journal_new is called and
// releases it (goJournalDestroy) exactly once, when the journal and every
// registry using it are gone, or at once if capstan_journal_new fails.

// #include "capstan_go.h"
import "C"

import (
	"runtime/cgo"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// JournalStore keeps a journal in the host's own database or durable
// engine, for NewJournal. Each record is one JSON object, the text a JSON
// Lines journal holds per line (docs/durable-calls.md):
//
//	{"kind":"started","run":R,"call":C,"tool":T,"schema":H,"arguments":H}
//	{"kind":"completed",...the same...,"result":{"outcome":...,"content":...}}
//	{"kind":"tools","run":R,"call":C,"tools":[...]}
//
// Both methods run on capstan's threads, on the thread running the call
// (several at once, so a store must be safe for concurrent use), and must
// not call into a registry using the journal. An error or a panic fails the
// call: the call's result is an error naming the journal's failure ("the
// host's record returned 1", 2 for a panic; the error itself does not cross
// the C ABI, so a store logs it if it is wanted), and a failed `started`
// record keeps the tool from running.
type JournalStore interface {
	// Record stores one record durably before it returns; a later
	// `completed` record of a (run, call) key replaces its `started`.
	// A `tools` record (the registry's tools when a batch began, keyed by
	// the batch's first call) is for audit: keep it apart from the calls'
	// records, or drop it. recordJSON is the store's to keep.
	Record(recordJSON []byte) error
	// Lookup returns the record of a key as Record was given it
	// (`completed` if there is one, else `started`), or nil, nil if there
	// is none.
	Lookup(runID, callID string) ([]byte, error)
}

// Return codes of the store's trampolines: what capstan's error text
// shows ("the host's record returned 2").
const (
	storeFailed   = 1 // the store returned an error
	storePanicked = 2 // the store panicked
	storeGone     = 3 // the handle was released already (a capstan bug)
	storeBadText  = 4 // Lookup answered bytes that are not UTF-8
)

// Live host stores (handles capstan has not released), and releases of a
// handle released already (a capstan bug if ever non-zero); export_test.go
// reads them.
var journalStoresLive, journalStoreDoubleDestroys atomic.Int64

// NewJournal makes a journal kept by store (capstan_journal_new). Give it
// to Registry.SetJournal and Close it when done: the store is kept alive
// while the journal or a registry using it is, and let go (never called
// again) once both are gone.
func NewJournal(store JournalStore) (*Journal, error) {
	if store == nil {
		return nil, &Error{Op: "NewJournal", Status: ErrNullParameter, Message: "the store is nil"}
	}
	journalStoresLive.Add(1)
	h := cgo.NewHandle(store)
	var out *C.capstan_journal
	var msg *C.char
	// On failure capstan has released h already (goJournalDestroy).
	if st := C.cg_journal_new(C.uintptr_t(h), &out, &msg); st != C.CAPSTAN_OK {
		return nil, newError("NewJournal", st, msg)
	}
	return &Journal{ptr: out}, nil
}

func journalStore(h C.uintptr_t) JournalStore {
	s, _ := value(h).(JournalStore)
	return s
}

// storeCall runs f, turning a panic into storePanicked and an error into
// storeFailed: nothing may unwind into capstan's thread.
func storeCall(f func() (C.int32_t, error)) (code C.int32_t) {
	defer func() {
		if recover() != nil {
			code = storePanicked
		}
	}()
	code, err := f()
	if err != nil {
		return storeFailed
	}
	return code
}

//export goJournalRecord
func goJournalRecord(h C.uintptr_t, recordJSON *C.char, n C.size_t) C.int32_t {
	s := journalStore(h)
	if s == nil {
		return storeGone
	}
	b := C.GoBytes(unsafe.Pointer(recordJSON), C.int(n))
	return storeCall(func() (C.int32_t, error) { return 0, s.Record(b) })
}

//export goJournalLookup
func goJournalLookup(h C.uintptr_t, run *C.char, runLen C.size_t, call *C.char, callLen C.size_t,
	answer *C.capstan_journal_answer) C.int32_t {
	s := journalStore(h)
	if s == nil {
		return storeGone
	}
	runID, callID := C.GoStringN(run, C.int(runLen)), C.GoStringN(call, C.int(callLen))
	return storeCall(func() (C.int32_t, error) {
		found, err := s.Lookup(runID, callID)
		if err != nil || len(found) == 0 {
			return 0, err
		}
		if !utf8.Valid(found) {
			return storeBadText, nil
		}
		// Copied by capstan. Not a record: INVALID_ARGUMENT, and capstan
		// fails the call saying what is wrong with it (return 0 so that
		// its reason, not this code, is what the call's result names).
		st := C.capstan_journal_answer_set(answer, (*C.char)(unsafe.Pointer(&found[0])), C.size_t(len(found)))
		if st != C.CAPSTAN_OK && st != C.CAPSTAN_ERR_INVALID_ARGUMENT {
			return storeFailed, nil
		}
		return 0, nil
	})
}

//export goJournalDestroy
func goJournalDestroy(h C.uintptr_t) {
	defer func() {
		if recover() != nil { // released already: never crash for it
			journalStoreDoubleDestroys.Add(1)
		}
	}()
	cgo.Handle(h).Delete()
	journalStoresLive.Add(-1)
}
